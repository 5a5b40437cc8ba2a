"""``litm fit``: fit ranked documents into a token budget (fitted prompt on stdout, drop list on stderr)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from litm.budget import fit
from litm.cli import app
from litm.cli._input import load_input
from litm.cli._options import FormatOpt, LangOpt, RankByOpt, check_strategy, in_flags
from litm.errors import ContextBudgetExceeded
from litm.placement import PlacementOptions
from litm.placement._registry import DEFAULT_STRATEGY
from litm.prompt import AnchorOptions, PromptBuilder, Wording
from litm.tokens import get_tokenizer


@app.command("fit")
def fit_cmd(
    path: Path | None = typer.Argument(None, help="JSON Lines or JSON array of documents; '-' or omitted: stdin."),
    budget: int = typer.Option(..., "--budget", "-b", min=1, help="max_input_tokens for the whole prompt."),
    model: str = typer.Option(
        "local", "--model", "-m",
        help="The model the prompt is for: its tokenizer counts, and it picks the anchors and auto's profile.",
    ),
    question: str = typer.Option(..., "--question", "-q", help="The question."),
    reserve: int = typer.Option(0, "--reserve", min=0, help="Tokens reserved for the answer."),
    fmt: FormatOpt = typer.Option("text", "--format", "-f", help="Count and print in this format."),
    lang: LangOpt = typer.Option("en", "--lang", help="Language of the prompt's labels."),
    strategy: str = typer.Option(
        DEFAULT_STRATEGY, "--strategy", "-s", callback=check_strategy, help="Placement of the documents that fit."
    ),
    rank_by: RankByOpt = typer.Option(RankByOpt.input, "--rank-by", help="Trust input order, or sort by score."),
    truncate: bool = typer.Option(False, "--truncate", help="Cut the best dropped document at a sentence end."),
    system: str | None = typer.Option(None, "--system", help="System text (counted)."),
    scores: bool | None = typer.Option(
        None, "--scores/--no-scores", show_default=False,
        help="Relevance scores in litm's tags (given or not: AnchorOptions with it) [default: the model's anchors].",
    ),
    middle_marker: bool | None = typer.Option(
        None, "--middle-marker", show_default=False, help="Mark documents in the middle zone (litm's tags)."
    ),
) -> None:
    """Trim the lowest-ranked documents until the full prompt fits the budget, then print it.

    Exit code 2 (with the numbers) when even the prompt without documents does not fit.
    Example: litm fit --budget 2000 --model local -q "who won?" --rank-by score < docs.jsonl
    """
    records = load_input(path)
    # Ranking and placement are fit's options: the builder only renders the plan fit hands it. Without an anchor
    # flag the prompt gets the model's anchors (the plan carries the model), as build_prompt does.
    flags = (("scores", scores), ("middle_marker", middle_marker))
    fields = {name: value for name, value in flags if value is not None}
    anchors = AnchorOptions().replace(**fields) if fields else None
    builder = PromptBuilder(wording=Wording(lang=str(lang.value), system=system), anchors=anchors)
    tokenizer = get_tokenizer(model)
    try:
        result = fit(
            records, question, builder, tokenizer, budget, reserve,
            format=str(fmt.value), placement=PlacementOptions(strategy, rank_by=rank_by.value, model=model),
            truncate=truncate,
        )  # fmt: skip
    except ContextBudgetExceeded as raised:
        err = in_flags(raised, {"max_input_tokens": "--budget", "reserve_output_tokens": "--reserve"})
        if err.floor is None:  # the reserve leaves no budget at all: there is no floor to report
            raise err from None
        margin = f", +{err.margin:.0%} margin for an approximate count" if err.margin else ""
        typer.echo(
            f"litm: error: budget {err.budget} tokens < floor {err.floor} tokens (prompt with no documents{margin}; "
            f"all documents: {err.prompt_tokens}); {err.advice}",
            err=True,
        )
        raise typer.Exit(code=2) from None
    sys.stdout.write(result.prompt.dumps(str(fmt.value)))
    sys.stdout.write("\n")
    approx = "" if result.exact else f" (approximate count: at most {result.upper} with a {result.margin:.0%} margin)"
    typer.echo(
        f"litm fit: {result.tokens}/{result.budget} tokens{approx}, kept {len(result.kept)}, "
        f"dropped {len(result.dropped)}" + (f", truncated {result.truncated}" if result.truncated else ""),
        err=True,
    )
    for doc in result.dropped:
        typer.echo(f"dropped {doc.id}", err=True)
