"""``litm index`` (build or update a retrieval index from a folder) and ``litm search`` (query it)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from litm.cli import app
from litm.cli._options import BackendOpt, RetrieverOpt
from litm.retrieve import Hit, Index, build_index
from litm.retrieve._chunking import DEFAULT_MAX_TOKENS, DEFAULT_OVERLAP
from litm.retrieve._retrievers import make_retriever, shortfall
from litm.util._progress import progress


@app.command("index")
def index_cmd(
    folder: Path = typer.Argument(..., help="Folder of .txt, .md, .rst, .html, .jsonl (and .pdf) files."),
    out: Path = typer.Option(..., "--out", "-o", help="Index folder: created, or brought up to date."),
    max_tokens: int = typer.Option(DEFAULT_MAX_TOKENS, "--max-tokens", min=8, help="Chunk size in MiniLM tokens."),
    overlap: int = typer.Option(DEFAULT_OVERLAP, "--overlap", min=0, help="Tokens repeated between chunks."),
    dense: bool = typer.Option(True, "--dense/--no-dense", help="Embed chunks (for dense and hybrid search)."),
    rehash: bool = typer.Option(False, "--rehash", help="Hash every file, even those whose size and mtime match."),
    show_progress: bool = typer.Option(True, "--progress/--no-progress", help="Report progress on stderr."),
) -> None:
    """Index a folder; run it again to pick up changes (unchanged files are not read again).

    Files that are not text are skipped with a warning; a folder with nothing to index is an error. An index
    with a damaged file is repaired (re-embedded or rebuilt from the folder), or the error names what to delete.

    Example: litm index ~/notes --out ~/notes.index
    """
    with progress("index", enabled=show_progress) as bar:
        index, report = build_index(
            folder, out, max_tokens=max_tokens, overlap=overlap, dense=dense, rehash=rehash, progress=bar
        )
    for note in report.repairs:
        typer.echo(f"litm: repaired: {note}", err=True)
    for key, why in report.unreadable:
        typer.echo(f"litm: warning: skipped {key}: {why}", err=True)
    typer.echo(f"{index.path}: {report.summary()}")


def _line(hit: Hit) -> str:
    chunk = hit.chunk
    where = f"{chunk.source} [{chunk.start}:{chunk.end}]"
    title = f" {chunk.title}" if chunk.title and chunk.title != chunk.source else ""
    preview = " ".join(chunk.text.split())
    preview = preview if len(preview) <= 200 else preview[:199] + "…"
    return f"{hit.rank:>3}. {hit.score:.4f} {where}{title}\n     {preview}"


@app.command("search")
def search_cmd(
    index: Path = typer.Argument(..., help="Index folder made by `litm index`."),
    query: str = typer.Argument(..., help="What to look for."),
    k: int = typer.Option(5, "--k", "-k", min=1, help="How many hits."),
    retriever: RetrieverOpt = typer.Option(
        RetrieverOpt.auto, "--retriever", "-r", help="auto: hybrid when the index has vectors, else bm25."
    ),
    rerank: bool = typer.Option(False, "--rerank", help="Re-score the top 50 candidates with the dense model."),
    backend: BackendOpt = typer.Option(BackendOpt.numpy, "--backend", help="Vector search for dense retrieval."),
    as_json: bool = typer.Option(False, "--json", help="JSON Lines of documents (pipe into `litm place`)."),
) -> None:
    """Search an index; prints the best chunks with their score, source and character offsets.

    Fewer hits than --k come with the reason on stderr (the index holds fewer chunks, or fewer share a word
    with the query). A blank query is refused.

    Example: litm search ~/notes.index "how do I rotate the keys?" --k 3
    """
    opened = Index.open(index)
    found = make_retriever(opened, retriever.value, backend=backend.value, rerank="dense" if rerank else None)
    hits = found.search(query, k)
    for hit in hits:
        typer.echo(json.dumps(hit.doc.to_dict(), ensure_ascii=False) if as_json else _line(hit))
    why = shortfall(found, k, len(hits))
    if why is not None:
        typer.echo(f"{len(hits)} of {k} hits: {why}", err=True)
