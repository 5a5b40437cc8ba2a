"""``litm compress``: compress each question's documents for the question (JSON Lines in, JSON Lines out).

litm compress questions.jsonl --goal 4x --tokenizer openai:gpt-4o > compressed.jsonl
cat questions.jsonl | litm compress --goal 600 --scorer lm --out compressed.jsonl
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import typer

from litm.cli import app
from litm.compress import CompressOptions
from litm.compress._compress import UNITS, parse_target
from litm.compress._records import compress_records
from litm.compress._scorers import SCORERS
from litm.errors import InvalidOptionError
from litm.util._files import atomic_write
from litm.util._records import decode_text, parse_records


@app.command("compress")
def compress_cmd(
    path: Path | None = typer.Argument(None, help="JSON Lines of {question, documents}; '-' or omitted: stdin."),
    goal: str = typer.Option(..., "--goal", "-g", help="A ratio (4x keeps a quarter) or document tokens (600)."),
    tokenizer: str = typer.Option("local", "--tokenizer", "-t", help="The target model's spec: its tokens count."),
    scorer: str = typer.Option("embed", "--scorer", help=f"How relevance is scored: {', '.join(SCORERS)}."),
    model: str = typer.Option("local", "--scorer-model", help="The lm scorer's local model."),
    unit: str = typer.Option("sentence", "--unit", help=f"What is kept or cut: {', '.join(UNITS)}."),
    reorder: str | None = typer.Option(None, "--reorder", help="Place kept documents by score (e.g. edges)."),
    link: str | None = typer.Option(None, "--link", help="Multi-hop: 'titles' ranks a document named by the "
                                    "question or the best document right after it."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write here (atomically) instead of stdout."),
) -> None:
    """Keep the sentences of each question's documents that answer it, within a token budget.

    Writes one JSON object per question (every document's kept text, spans in the original, tokens and
    why it was cut) and a summary line on stderr.
    """
    if scorer not in SCORERS:
        raise InvalidOptionError(f"unknown scorer {scorer!r}; choose from {', '.join(SCORERS)}")
    target, ratio = parse_target(goal)
    source = "stdin" if path is None or str(path) == "-" else str(path)
    data = sys.stdin.buffer.read() if source == "stdin" else Path(source).read_bytes()
    records = parse_records(decode_text(data, source=source), source=source)
    began = time.perf_counter()
    made = compress_records(
        records, tokenizer=tokenizer, target=target, ratio=ratio, scorer=scorer, model=model,
        options=CompressOptions(unit=unit, reorder=reorder, link=link),
    )  # fmt: skip
    results = list(made)
    text = "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in results)
    # The output is written only once every record compressed: a failure leaves no partial file behind.
    if out is None:
        sys.stdout.write(text)
    else:
        atomic_write(out, text)
    before = sum(r.original_tokens for r in results)
    after = sum(r.tokens for r in results)
    ratio_done = f"{before / after:.1f}x" if after else "everything cut"
    typer.echo(
        f"compressed {len(results)} question(s): {before} -> {after} document tokens ({ratio_done}), "
        f"scorer {scorer}, {time.perf_counter() - began:.1f} s",
        err=True,
    )
