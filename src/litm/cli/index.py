"""``litm index`` (build or update a retrieval index from a folder) and ``litm search`` (query it)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import typer

from litm.cli import app
from litm.retrieve import DEFAULT_MAX_TOKENS, DEFAULT_OVERLAP, Hit, build_index, search
from litm.util.progress import progress


class RetrieverOpt(StrEnum):
    auto = "auto"
    bm25 = "bm25"
    dense = "dense"
    hybrid = "hybrid"


class BackendOpt(StrEnum):
    numpy = "numpy"
    faiss = "faiss"


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

    Example: litm index ~/notes --out ~/notes.index
    """
    with progress("index", enabled=show_progress) as bar:
        index, report = build_index(
            folder, out, max_tokens=max_tokens, overlap=overlap, dense=dense, rehash=rehash, progress=bar
        )
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

    Example: litm search ~/notes.index "how do I rotate the keys?" --k 3
    """
    hits = search(
        index, query, k=k, retriever=retriever.value, backend=backend.value, rerank="dense" if rerank else None
    )
    for hit in hits:
        typer.echo(json.dumps(hit.doc.to_dict(), ensure_ascii=False) if as_json else _line(hit))
    if not hits and not as_json:
        typer.echo("no matching chunks", err=True)
