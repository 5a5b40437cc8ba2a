"""``litm models``, ``litm ask`` and ``litm count``: the model layer from the command line.

Every command takes the same ``--model SPEC`` strings as Python (``local``, ``local:smollm2``,
``local:/path/model.gguf``, ``openai:gpt-4o-mini``, ``openai-compatible:http://127.0.0.1:8080/v1@name``,
``anthropic:claude-...``).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from litm.cli import app
from litm.cli._input import read_stdin
from litm.errors import InputFormatError
from litm.models import Model, load_model
from litm.models._listing import models_info
from litm.prompt._messages import Message
from litm.util._records import decode_text, parse_json

_MODEL_HELP = (
    "Model spec: local, local:smollm2, local:PATH.gguf, openai:MODEL, openai-compatible:URL@MODEL, anthropic:MODEL."
)
def _read_text(path: Path | None) -> str:
    if path is None or str(path) == "-":
        return read_stdin()
    try:
        return decode_text(path.read_bytes(), source=str(path))
    except OSError as exc:
        raise InputFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc


@app.command("models")
def models_cmd(
    json_out: bool = typer.Option(False, "--json", help="Print the listing as JSON."),
) -> None:
    """List the models litm can use and where the default model lives (loads and sends nothing).

    Example: litm models --json
    """
    info = models_info()
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
    for remote in info["remote"]:
        scheme = remote["scheme"].split("-")[0]
        sdk = "SDK installed" if remote["sdk_installed"] else f"needs pip install 'litm[{scheme}]'"
        if remote["key_variable"]:
            key = f"{remote['key_variable']} {'set' if remote['key_set'] else 'not set'}"
        else:
            key = "key optional (OPENAI_API_KEY, else a placeholder)"
        typer.echo(f"  {remote['spec']:<44} {sdk}; {key}")
    if info["plugins"]:
        typer.echo(f"Plugin backends: {', '.join(info['plugins'])}")


def _ask_prompt(model: Model, question: str, system: str | None, raw: bool) -> tuple[str | list[Message], list[str]]:
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
