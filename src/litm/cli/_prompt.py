"""``litm prompt``: assemble an anchored, injection-safe prompt from JSON Lines documents.

litm prompt docs.jsonl -q "who won?" --strategy pyramid --rank-by score --format openai
litm prompt docs.jsonl -q "who won?" --config prompt.toml   # options from a file (Python API names)
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer

from litm.cli import app
from litm.cli._config import Key, config_option, with_config
from litm.cli._help import PanelCommand
from litm.cli._input import load_input
from litm.cli._options import FormatOpt, LangOpt, QuestionPosOpt, RankByOpt, ScoreAsOpt, StyleOpt, check_strategy
from litm.errors import PromptError
from litm.placement import PlacementOptions, PositionProfile
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


_FORMAT, _PLACE, _ANCHORS, _WORDING, _ESCAPING = "Question and format", "Placement", "Anchors", "Wording", "Escaping"
# The library's defaults are the command's: one set of defaults across entry points. Without any anchor
# option the prompt gets its model's anchors (--model; none: Liu et al.'s format), as build_prompt does
# without anchors=; any anchor option gives AnchorOptions with it, whose defaults these are.
_ANCHOR_DEFAULTS = AnchorOptions()
_ANCHOR_FIELDS = ("score_as", "scores", "positions", "sources", "closing_ids", "recap", "middle_marker", "middle_width")


def _choices(options: type[Enum]) -> tuple[str, ...]:
    return tuple(str(o.value) for o in options)


#: ``--config`` keys: the Python API's names (build_prompt's and its option objects': AnchorOptions, Wording,
#: Layout, Escaping, the placement's), each with the option it stands for; files are given by path.
KEYS = {
    "format": Key("fmt", ("str",), choices=_choices(FormatOpt)),
    "lang": Key("lang", ("str",), choices=_choices(LangOpt)),
    "strategy": Key("strategy", ("str",)),
    "rank_by": Key("rank_by", ("str",), choices=_choices(RankByOpt)),
    "model": Key("model", ("str",)),
    "top_k": Key("top_k", ("int",), low=0),
    "profile": Key("profile", ("str",)),
    "style": Key("style", ("str",), choices=_choices(StyleOpt)),
    "score_as": Key("score_as", ("str",), choices=_choices(ScoreAsOpt)),
    "scores": Key("scores", ("bool",)),
    "positions": Key("positions", ("bool",)),
    "sources": Key("sources", ("bool",)),
    "closing_ids": Key("closing_ids", ("bool",)),
    "recap": Key("recap", ("bool",)),
    "middle_marker": Key("middle_marker", ("bool",)),
    "middle_width": Key("middle_width", ("float",), low=0, high=1),
    "question_position": Key("question_position", ("str",), choices=_choices(QuestionPosOpt)),
    "repeat_instruction": Key("repeat_instruction", ("bool",)),
    "system": Key("system", ("str",)),
    "instruction": Key("instruction", ("str",)),
    "answer_cue": Key("answer_cue", ("str",)),
    "quote_first": Key("quote_first", ("bool",)),
    "template": Key("template", ("str",)),
    "chat_template": Key("chat_template", ("str",)),
    "special_tokens": Key("special_tokens", ("list[str]",)),
}


def _text(value: object) -> str | None:
    return None if value is None else str(value)


@app.command("prompt", cls=PanelCommand)
def prompt_cmd(
    ctx: typer.Context,
    path: Path | None = typer.Argument(None, help="JSON Lines or JSON array of documents; '-' or omitted: stdin."),
    config_file: Path | None = config_option("docs/anchors.md"),
    question: str = typer.Option(
        ..., "--question", "-q", help="The question (untrusted text, escaped).", rich_help_panel=_FORMAT
    ),
    fmt: FormatOpt = typer.Option("text", "--format", "-f", help="Output format.", rich_help_panel=_FORMAT),
    lang: LangOpt = typer.Option(
        "en", "--lang", help="Language of the prompt's labels and texts.", rich_help_panel=_FORMAT
    ),
    strategy: str | None = typer.Option(
        None, "--strategy", "-s", callback=check_strategy, help="Place first (default: keep order).",
        rich_help_panel=_PLACE,
    ),
    rank_by: RankByOpt = typer.Option(
        RankByOpt.input, "--rank-by", help="Trust input order, or sort by score.", rich_help_panel=_PLACE
    ),
    top_k: int | None = typer.Option(
        None, "--top-k", min=0, help="Keep only the K best-ranked documents.", rich_help_panel=_PLACE
    ),
    profile: Path | None = typer.Option(
        None, "--profile", help="Position profile JSON: drives --strategy profile and the middle zone.",
        rich_help_panel=_PLACE,
    ),
    model: str | None = typer.Option(
        None, "--model", "-m",
        help="The model spec the prompt is for: picks the anchors (with --style auto) and auto placement's profile.",
        rich_help_panel=_PLACE,
    ),
    style: StyleOpt = typer.Option(
        "auto", "--style",
        help="Anchor style: auto (the --model's measured format, else Liu et al.'s), litm's tags, the "
        "[DOC_ID: x | REL_SCORE: s] brackets, or Liu et al.'s.",
        rich_help_panel=_ANCHORS,
    ),
    score_as: ScoreAsOpt | None = typer.Option(
        None, "--score-as",
        help=f"Header score: relevance in [0, 1] (1 = best), the raw score, or the rank [default: "
        f"{_ANCHOR_DEFAULTS.score_as}].",
        rich_help_panel=_ANCHORS, show_default=False,
    ),
    scores: bool | None = typer.Option(
        None, "--scores/--no-scores", help="Relevance scores in the headers [default: no].",
        rich_help_panel=_ANCHORS, show_default=False,
    ),
    positions: bool | None = typer.Option(
        None, "--positions/--no-positions", help="Positions ('3/10') in the headers [default: no].",
        rich_help_panel=_ANCHORS, show_default=False,
    ),
    sources: bool | None = typer.Option(
        None, "--sources/--no-sources", help="Titles and sources in the headers [default: yes].",
        rich_help_panel=_ANCHORS, show_default=False,
    ),
    closing_ids: bool | None = typer.Option(
        None, "--closing-ids/--no-closing-ids", help="The id in each closing tag [default: no].",
        rich_help_panel=_ANCHORS, show_default=False,
    ),
    recap: bool | None = typer.Option(
        None, "--recap/--no-recap", help="A closing recap of the ids, for citations [default: no].",
        rich_help_panel=_ANCHORS, show_default=False,
    ),
    middle_marker: bool | None = typer.Option(
        None, "--middle-marker", help="Mark documents in the middle zone.", rich_help_panel=_ANCHORS,
        show_default=False,
    ),
    middle_width: float | None = typer.Option(
        None, "--middle-width", min=0.0, max=1.0,
        help=f"Central fraction marked (ignored with --profile) [default: {_ANCHOR_DEFAULTS.middle_width}].",
        rich_help_panel=_ANCHORS, show_default=False,
    ),
    question_position: QuestionPosOpt = typer.Option(
        "after", "--question-position", help="Where the question goes.", rich_help_panel=_WORDING
    ),
    repeat_instruction: bool = typer.Option(
        False, "--repeat-instruction", help="Repeat the instruction at the end.", rich_help_panel=_WORDING
    ),
    system: str | None = typer.Option(None, "--system", help="System text.", rich_help_panel=_WORDING),
    instruction: str | None = typer.Option(
        None, "--instruction", help="Replace the instruction ('' for none).", rich_help_panel=_WORDING
    ),
    answer_cue: str | None = typer.Option(
        None, "--answer-cue", help="Replace the text format's final cue.", rich_help_panel=_WORDING
    ),
    quote_first: bool = typer.Option(
        False, "--quote-first", help="Ask for the supporting sentence, quoted, then the answer after 'Answer:'.",
        rich_help_panel=_WORDING,
    ),
    template: Path | None = typer.Option(
        None, "--template", help="Prompt template JSON: fields overriding --lang's labels and texts.",
        rich_help_panel=_WORDING,
    ),
    chat_template: Path | None = typer.Option(
        None, "--chat-template", help="A .gguf (its tokenizer.chat_template) or a Jinja file; needed for jinja.",
        rich_help_panel=_ESCAPING,
    ),
    special_tokens: list[str] = typer.Option(
        [], "--special-token", help="Another token to escape (repeatable).", rich_help_panel=_ESCAPING
    ),
) -> None:
    """Print an anchored prompt for the question: text, or the messages as JSON.

    Example: litm prompt docs.jsonl -q "who won?" --strategy pyramid --rank-by score --format openai

    Without any anchor option the prompt gets the anchors of --model (its measured format, else Liu et al.'s
    plain one); any anchor option gives litm's id-and-title tags with that option changed.

    With --quote-first the model is asked to quote the sentence that answers first; the text and anthropic
    formats start its reply with "Quote:" (a prefill).
    """
    given: dict[str, object] = {
        "format": fmt.value, "lang": lang.value, "strategy": strategy, "rank_by": rank_by.value, "top_k": top_k,
        "model": model, "profile": _text(profile), "style": style.value,
        "score_as": None if score_as is None else score_as.value, "scores": scores,
        "positions": positions, "sources": sources, "closing_ids": closing_ids,
        "recap": recap, "middle_marker": middle_marker, "middle_width": middle_width,
        "question_position": question_position.value, "repeat_instruction": repeat_instruction, "system": system,
        "instruction": instruction, "answer_cue": answer_cue, "quote_first": quote_first,
        "template": _text(template), "chat_template": _text(chat_template), "special_tokens": special_tokens,
    }  # fmt: skip
    v = with_config(ctx, config_file, KEYS, given)
    strategy = check_strategy(_text(v["strategy"]))
    records = load_input(path)
    prof = PositionProfile.load(str(v["profile"])) if v["profile"] is not None else None
    # Without --strategy the documents keep their order (still ranked, deduplicated and cut to --top-k).
    top = v["top_k"]
    placement = PlacementOptions(
        strategy=strategy or "none", rank_by=str(v["rank_by"]), top_k=None if top is None else int(str(top)),  # type: ignore[arg-type]
        profile=prof if strategy else None, min_docs=None if strategy else 0, model=_text(v["model"]),
    )  # fmt: skip
    language = str(v["lang"])
    base = PromptTemplate.load(str(v["template"]), lang=language) if v["template"] is not None else (
        PromptTemplate.for_lang(language)
    )  # fmt: skip
    marker = v["middle_marker"] is True
    fields: dict[str, object] = {name: v[name] for name in _ANCHOR_FIELDS if v[name] is not None}
    if "middle_width" in fields:
        fields["middle_width"] = float(str(fields["middle_width"]))
    if v["style"] != "auto":
        fields["style"] = str(v["style"])
    anchors = AnchorOptions(**fields, middle_profile=prof if marker else None) if fields else None  # type: ignore[arg-type]
    chat = v["chat_template"]
    specials = v["special_tokens"]
    prompt = build_prompt(
        records,
        question,
        placement=placement,
        wording=Wording(
            template=base, system=_text(v["system"]), instruction=_text(v["instruction"]),
            answer_cue=_text(v["answer_cue"]), quote_first=v["quote_first"] is True,
        ),
        anchors=anchors,
        layout=Layout(
            question_position=str(v["question_position"]),  # type: ignore[arg-type]
            repeat_instruction=v["repeat_instruction"] is True,
        ),
        escaping=Escaping(
            special_tokens=tuple(str(t) for t in specials) if isinstance(specials, list) else (),
            chat_template=_chat_template(Path(str(chat))) if chat is not None else None,
        ),
    )  # fmt: skip
    out_format = str(v["format"])
    rendered = prompt.dumps(out_format)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8")  # prompts carry any script; the locale may not
    if out_format in ("openai", "anthropic"):
        sys.stdout.write(rendered + "\n")
    else:
        # The exact prompt: a newline is added only for a terminal, so piped output counts true.
        sys.stdout.write(rendered + ("\n" if sys.stdout.isatty() else ""))
