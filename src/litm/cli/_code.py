"""``litm code-context``: the function being changed, its direct callers and what it calls, within a budget.

The context goes to stdout (text, Markdown, or JSON with every piece's path, lines, kind and rank); one
summary line and the dropped pieces go to stderr. Bad input (a missing file, an unknown or ambiguous
name, a target larger than the budget) exits 2 with one line.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path

import typer

from litm.cli import app
from litm.cli._options import check_strategy
from litm.code import CodeOptions, code_context
from litm.tokens import get_tokenizer


class CodeFormatOpt(StrEnum):
    text = "text"
    markdown = "markdown"
    json = "json"


class ResolutionOpt(StrEnum):
    auto = "auto"
    exact = "exact"
    name = "name"


@app.command("code-context")
def code_context_cmd(
    target: str = typer.Argument(..., help="PATH::Qualified.name or PATH:LINE (PATH relative to --root)."),
    budget: int = typer.Option(..., "--budget", "-b", min=1, help="Token budget for the whole context."),
    fmt: CodeFormatOpt = typer.Option(CodeFormatOpt.text, "--format", "-f",
                                      help="text or markdown (counted as printed), or json (counted as text)."),
    model: str = typer.Option("local", "--model", "-m", help="Model spec whose tokenizer counts (e.g. openai:gpt-4)."),
    root: Path = typer.Option(Path("."), "--root",
                              help="Repository root searched for callers (a target outside it: its own repository)."),
    resolution: ResolutionOpt = typer.Option(ResolutionOpt.auto, "--resolution",
                                             help="auto: exact for Python (jedi), by name elsewhere."),
    order: str = typer.Option(
        "pyramid", "--order", callback=check_strategy, help="Placement of the pieces (pyramid: target last)."
    ),
    max_caller_lines: int = typer.Option(60, "--max-caller-lines", min=1,
                                         help="Longer callers are cut to the lines around their calls."),
) -> None:  # fmt: skip
    """Print the target, its callers, its callees' signatures, class header and imports, fitted to --budget.

    Example: litm code-context json/decoder.py::JSONDecoder.raw_decode --budget 1500 --root /usr/lib/python3.11
    """
    counted = "text" if fmt is CodeFormatOpt.json else fmt.value
    tokenizer = get_tokenizer(model)
    ctx = code_context(
        root, target, budget=budget, counter=tokenizer, format=counted,
        options=CodeOptions(resolution=resolution.value, order=order, max_caller_lines=max_caller_lines),
    )  # fmt: skip
    if fmt is CodeFormatOpt.json:
        sys.stdout.write(json.dumps(ctx.to_dict(), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(ctx.render())
    sys.stdout.write("\n")
    approx = "" if getattr(tokenizer, "exact", True) else " (approximate count)"
    kinds = ", ".join(f"{sum(p.kind == k for p in ctx.pieces)} {k}" for k in ("caller", "callee")
                      if any(p.kind == k for p in ctx.pieces))  # fmt: skip
    typer.echo(
        f"litm code-context: {ctx.tokens}/{ctx.budget} tokens{approx}, {ctx.resolution} resolution, "
        f"kept {len(ctx.pieces)} pieces"
        + (f" ({kinds})" if kinds else "")
        + f", dropped {len(ctx.dropped)}"
        + (f", {len(ctx.unchecked)} call sites unchecked" if ctx.unchecked else ""),
        err=True,
    )
    for note in ctx.notes:
        typer.echo(f"note: {note}", err=True)
    for piece in ctx.dropped:
        typer.echo(f"dropped {piece.kind} {piece.source} {piece.qualname or ''}".rstrip(), err=True)
