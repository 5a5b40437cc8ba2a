"""``litm prompt``: assemble an anchored, injection-safe prompt from JSON Lines documents."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from litm.cli import app
from litm.cli._input import load_input
from litm.cli._options import FormatOpt, LangOpt, QuestionPosOpt, RankByOpt, ScoreAsOpt, StyleOpt, check_strategy
from litm.errors import PromptError
from litm.placement import PositionProfile
from litm.prompt import AnchorOptions, ChatTemplate, Escaping, Layout, PromptTemplate, Wording, build_prompt


def _chat_template(path: Path) -> ChatTemplate:
    if path.suffix.lower() == ".gguf":
        return ChatTemplate.from_gguf(path)
    try:
        return ChatTemplate(path.read_text(encoding="utf-8"), name=path.name)
    except FileNotFoundError:
        raise PromptError(f"chat template file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(f"cannot read chat template {path}: {exc}") from None


@app.command("prompt")
def prompt_cmd(
    path: Path | None = typer.Argument(None, help="JSON Lines or JSON array of documents; '-' or omitted: stdin."),
    question: str = typer.Option(..., "--question", "-q", help="The question (untrusted text, escaped)."),
    fmt: FormatOpt = typer.Option("text", "--format", "-f", help="Output format."),
    lang: LangOpt = typer.Option("en", "--lang", help="Language of the prompt's labels and texts."),
    strategy: str | None = typer.Option(
        None, "--strategy", "-s", callback=check_strategy, help="Place first (default: keep order)."
    ),
    rank_by: RankByOpt = typer.Option(RankByOpt.input, "--rank-by", help="Trust input order, or sort by score."),
    top_k: int | None = typer.Option(None, "--top-k", min=0, help="Keep only the K best-ranked documents."),
    profile: Path | None = typer.Option(
        None, "--profile", help="Position profile JSON: drives --strategy profile and the middle zone."
    ),
    style: StyleOpt = typer.Option(
        "xml", "--style", help="Anchor style: litm's tags, the [DOC_ID: x | REL_SCORE: s] brackets, or Liu et al.'s."
    ),
    score_as: ScoreAsOpt = typer.Option(
        "relevance", "--score-as", help="Header score: relevance in [0, 1] (1 = best), the raw score, or the rank."
    ),
    no_scores: bool = typer.Option(False, "--no-scores", help="Leave relevance scores out of the headers."),
    no_positions: bool = typer.Option(False, "--no-positions", help="Leave positions ('3/10') out of the headers."),
    no_sources: bool = typer.Option(False, "--no-sources", help="Leave titles and sources out of the headers."),
    no_closing_ids: bool = typer.Option(False, "--no-closing-ids", help="Closing tags without the id."),
    no_recap: bool = typer.Option(False, "--no-recap", help="No closing recap of the ids."),
    middle_marker: bool = typer.Option(False, "--middle-marker", help="Mark documents in the middle zone."),
    middle_width: float = typer.Option(
        0.5, "--middle-width", min=0.0, max=1.0, help="Central fraction marked (ignored with --profile)."
    ),
    question_position: QuestionPosOpt = typer.Option("after", "--question-position", help="Where the question goes."),
    repeat_instruction: bool = typer.Option(False, "--repeat-instruction", help="Repeat the instruction at the end."),
    system: str | None = typer.Option(None, "--system", help="System text."),
    instruction: str | None = typer.Option(None, "--instruction", help="Replace the instruction ('' for none)."),
    answer_cue: str | None = typer.Option(None, "--answer-cue", help="Replace the text format's final cue."),
    quote_first: bool = typer.Option(
        False, "--quote-first", help="Ask for the supporting sentence, quoted, then the answer after 'Answer:'."
    ),
    template: Path | None = typer.Option(
        None, "--template", help="Prompt template JSON: fields overriding --lang's labels and texts."
    ),
    chat_template: Path | None = typer.Option(
        None, "--chat-template", help="A .gguf (its tokenizer.chat_template) or a Jinja file; needed for jinja."
    ),
    special_tokens: list[str] = typer.Option([], "--special-token", help="Another token to escape (repeatable)."),
) -> None:
    """Print an anchored prompt for the question: text, or the messages as JSON.

    Example: litm prompt docs.jsonl -q "who won?" --strategy pyramid --rank-by score --format openai

    With --quote-first the model is asked to quote the sentence that answers first; the text and anthropic
    formats start its reply with "Quote:" (a prefill).
    """
    records = load_input(path)
    prof = PositionProfile.load(profile) if profile is not None else None
    placement: dict[str, object] = {"rank_by": rank_by.value, "top_k": top_k}
    if strategy is not None and prof is not None:
        placement["profile"] = prof
    if template is not None:
        base = PromptTemplate.load(template, lang=lang.value)
    else:
        base = PromptTemplate.for_lang(lang.value)
    prompt = build_prompt(
        records,
        question,
        strategy=strategy,
        placement=placement,
        wording=Wording(
            template=base, system=system, instruction=instruction, answer_cue=answer_cue, quote_first=quote_first
        ),
        anchors=AnchorOptions(
            style=style.value,
            positions=not no_positions,
            scores=not no_scores,
            score_as=score_as.value,
            sources=not no_sources,
            closing_ids=not no_closing_ids,
            middle_marker=middle_marker,
            recap=not no_recap,
            middle_width=middle_width,
            middle_profile=prof if middle_marker else None,
        ),
        layout=Layout(question_position=question_position.value, repeat_instruction=repeat_instruction),
        escaping=Escaping(
            special_tokens=tuple(special_tokens),
            chat_template=_chat_template(chat_template) if chat_template is not None else None,
        ),
    )
    rendered = prompt.render(fmt.value)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8")  # prompts carry any script; the locale may not
    if isinstance(rendered, str):
        # The exact prompt: a newline is added only for a terminal, so piped output counts true.
        sys.stdout.write(rendered + ("\n" if sys.stdout.isatty() else ""))
    else:
        sys.stdout.write(json.dumps(rendered, ensure_ascii=False, indent=2) + "\n")
