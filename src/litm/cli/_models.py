"""``litm models``, ``litm ask`` and ``litm count``: the model layer from the command line.

Every command takes the same ``--model SPEC`` strings as Python (``local``, ``local:smollm2``,
``local:/path/model.gguf``, ``openai:gpt-4o-mini``, ``openai-compatible:http://127.0.0.1:8080/v1@name``,
``anthropic:claude-...``).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import typer

from litm.cli import app
from litm.cli._input import read_stdin
from litm.errors import InputFormatError
from litm.models import Model, load_model
from litm.models._embedded import EMBEDDED, cache_dir
from litm.models._spec import backends
from litm.prompt.messages import Message
from litm.util._records import decode_text, parse_json

_MODEL_HELP = (
    "Model spec: local, local:smollm2, local:PATH.gguf, openai:MODEL, openai-compatible:URL@MODEL, anthropic:MODEL."
)
_REMOTE = (
    ("openai", "openai:MODEL", "openai", "OPENAI_API_KEY"),
    ("openai-compatible", "openai-compatible:http://HOST:PORT/v1@MODEL", "openai", None),
    ("anthropic", "anthropic:MODEL", "anthropic", "ANTHROPIC_API_KEY"),
)


def _read_text(path: Path | None) -> str:
    if path is None or str(path) == "-":
        return read_stdin()
    try:
        return decode_text(path.read_bytes(), source=str(path))
    except OSError as exc:
        raise InputFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _models_info() -> dict[str, Any]:
    embedded = []
    for model in EMBEDDED.values():
        available, where = model.status()
        embedded.append(
            {
                "spec": model.spec,
                "alias": model.alias,
                "available": available,
                "where": where,
                "description": model.description,
            }
        )
    remote = []
    for scheme, form, package, key_var in _REMOTE:
        installed = importlib.util.find_spec(package) is not None
        remote.append(
            {
                "scheme": scheme,
                "spec": form,
                "sdk_installed": installed,
                "key_variable": key_var,
                "key_set": bool(key_var and os.environ.get(key_var)),
            }
        )
    builtin = {"local", *(r[0] for r in _REMOTE)}
    return {
        "cache_dir": str(cache_dir()),
        "embedded": embedded,
        "local_files": "local:/path/model.gguf",
        "remote": remote,
        "plugins": [s for s in backends() if s not in builtin],
    }


@app.command("models")
def models_cmd(
    json_out: bool = typer.Option(False, "--json", help="Print the listing as JSON."),
) -> None:
    """List the models litm can use and where the default model lives (loads and sends nothing).

    Example: litm models --json
    """
    info = _models_info()
    if json_out:
        typer.echo(json.dumps(info, indent=2))
        return
    typer.echo(f"Embedded models (offline; cache directory {info['cache_dir']}):")
    width = max(16, *(len(row["spec"]) for row in info["embedded"]))
    for row in info["embedded"]:
        state = "available" if row["available"] else "missing"
        typer.echo(f"  {row['spec']:<{width}} {state:<10} {row['where']}")
        typer.echo(f"  {'':<{width}} {'':<10} {row['description']}")
    typer.echo(f"Any GGUF file:  {info['local_files']}")
    typer.echo("Remote backends (nothing is sent until a prompt is):")
    for row in info["remote"]:
        sdk = "SDK installed" if row["sdk_installed"] else f"needs pip install 'litm[{row['scheme'].split('-')[0]}]'"
        if row["key_variable"]:
            key = f"{row['key_variable']} {'set' if row['key_set'] else 'not set'}"
        else:
            key = "key optional (OPENAI_API_KEY, else a placeholder)"
        typer.echo(f"  {row['spec']:<44} {sdk}; {key}")
    if info["plugins"]:
        typer.echo(f"Plugin backends: {', '.join(info['plugins'])}")


def _ask_prompt(model: Model, question: str, system: str | None, raw: bool) -> tuple[Any, list[str]]:
    """What ``litm ask`` sends: chat messages when the model has a chat template, else a completion prompt."""
    if raw:
        return question, []
    if model.supports_chat:
        messages: list[Message] = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": question})
        return messages, []
    # A base model continues text: frame the question and stop at the end of the answer line.
    prefix = f"{system}\n\n" if system else ""
    return f"{prefix}Question: {question}\nAnswer:", ["\n"]


@app.command("ask")
def ask_cmd(
    question: str = typer.Argument(..., help="The question; '-' reads it from stdin."),
    model: str = typer.Option("local", "--model", "-m", help=_MODEL_HELP),
    max_tokens: int = typer.Option(64, "--max-tokens", min=1, help="Longest answer, in tokens."),
    system: str | None = typer.Option(None, "--system", help="A system prompt (chat models) or preamble."),
    raw: bool = typer.Option(False, "--raw", help="Send the text exactly as given, as a completion prompt."),
    json_out: bool = typer.Option(False, "--json", help="Print the answer with its token counts and latency."),
) -> None:
    """Ask a model one question (greedy). Chat models get a user message; base models a
    'Question: ...\\nAnswer:' completion prompt that stops at the end of the line.

    Example: litm ask --model local:smollm2 "What is the capital of France?"
    """
    text = read_stdin() if question == "-" else question
    loaded = load_model(model)
    prompt, stop = _ask_prompt(loaded, text, system, raw)
    done = loaded.complete(prompt, max_tokens=max_tokens, stop=stop)
    if json_out:
        typer.echo(json.dumps({"spec": loaded.spec, **done.to_dict()}, ensure_ascii=False))
    else:
        typer.echo(done.text.strip())


@app.command("count")
def count_cmd(
    path: Path | None = typer.Argument(None, help="Text file to count; '-' or omitted: stdin."),
    model: str = typer.Option("local", "--model", "-m", help=_MODEL_HELP),
    messages: bool = typer.Option(False, "--messages", help="The input is a JSON list of chat messages."),
    raw: bool = typer.Option(False, "--raw", help="Count the bare text, without the chat wrapping a model adds."),
    json_out: bool = typer.Option(False, "--json", help="Print the count with the tokenizer used."),
) -> None:
    """Count the tokens the input occupies when sent to the model, with the model's own tokenizer.

    The whole input counts, final newline included. Chat APIs (openai:, anthropic:) receive a plain text as
    one user message, so its chat overhead is included unless --raw is given.

    Example: litm count --model openai:gpt-4 < prompt.txt
    """
    text = _read_text(path)
    loaded = load_model(model)
    if raw and messages:
        raise InputFormatError("--raw counts plain text; it does not combine with --messages")
    if raw:
        n = loaded.tokenizer.count(text)
    elif messages:
        data = parse_json(text, source="--messages input")
        if not isinstance(data, list):
            raise InputFormatError("--messages expects a JSON list of {'role': ..., 'content': ...} objects")
        n = loaded.count_tokens(data)
    else:
        n = loaded.count_tokens(text)
    tokenizer = loaded.tokenizer
    if json_out:
        record = {"tokens": n, "spec": loaded.spec, "tokenizer": tokenizer.name, "exact": tokenizer.exact}
        typer.echo(json.dumps(record))
    else:
        typer.echo(str(n))
        if not tokenizer.exact:
            typer.echo(f"litm: note: approximate count ({tokenizer.name})", err=True)
