"""``litm models``, ``litm ask`` and ``litm count`` on the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from litm.cli import app
from litm.errors import InputFormatError, ModelNotFoundError, UnknownModelSpecError
from litm.models import load_model

runner = CliRunner()


def test_models_lists_the_embedded_models_and_backends() -> None:
    result = runner.invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    specs = ["local", "local:smollm2", "local:qwen2.5-coder-1.5b", "local:qwen2.5-coder-0.5b"]
    assert [row["spec"] for row in info["embedded"]] == specs  # the optional Qwen instruments too, installed or not
    assert all(isinstance(row["available"], bool) and row["description"] for row in info["embedded"])
    assert {row["scheme"] for row in info["remote"]} == {"openai", "openai-compatible", "anthropic"}
    text = runner.invoke(app, ["models"])
    assert text.exit_code == 0 and "Embedded models" in text.output and "local:/path/model.gguf" in text.output


def test_count_reads_stdin_with_the_models_tokenizer() -> None:
    from litm.models.tokenizers._bpe import OpenAITokenizer
    from litm.models.tokenizers._estimate import EstimateTokenizer

    text = "Lost in the middle\nand found at the edges.\n"
    result = runner.invoke(app, ["count", "--model", "openai-compatible:http://127.0.0.1:9/v1@m"], input=text)
    assert result.exit_code == 0
    assert result.stdout.strip() == str(EstimateTokenizer().count(text))  # the server's tokenizer is unknown
    assert "approximate" in result.stderr
    result = runner.invoke(app, ["count", "--model", "openai:gpt-4o"], input=text)
    as_message = [{"role": "user", "content": text}]
    assert result.stdout.strip() == str(OpenAITokenizer("o200k_base").count_messages(as_message))
    messages = json.dumps([{"role": "user", "content": "hi"}])
    result = runner.invoke(app, ["count", "-m", "openai:gpt-4", "--messages", "--json"], input=messages)
    expected = {"tokens": 8, "spec": "openai:gpt-4", "tokenizer": "bpe-openai:cl100k_base", "exact": True}
    assert json.loads(result.stdout) == expected


def test_count_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "prompt.txt"
    path.write_text("hello world", encoding="utf-8")
    result = runner.invoke(app, ["count", str(path), "-m", "openai:gpt-4"])
    assert result.exit_code == 0 and result.stdout.strip() == "9"  # sent as one user message: 3 + 3 + 1 + 2
    result = runner.invoke(app, ["count", str(path), "-m", "openai:gpt-4", "--raw"])
    assert result.exit_code == 0 and result.stdout.strip() == "2"


def test_bad_input_is_a_typed_error() -> None:
    result = runner.invoke(app, ["count", "--model", "llama:x"], input="hi")
    assert isinstance(result.exception, UnknownModelSpecError)
    result = runner.invoke(app, ["count", "-m", "openai:gpt-4", "--messages"], input="not json")
    assert isinstance(result.exception, InputFormatError)
    result = runner.invoke(app, ["ask", "--model", "local:/nonexistent/m.gguf", "hi"])
    assert isinstance(result.exception, ModelNotFoundError)


def test_errors_exit_with_code_2_and_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "litm", "ask", "--model", "nope", "hi"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()] and "unknown model spec 'nope'" in proc.stderr


@pytest.mark.model
def test_ask_the_embedded_default() -> None:
    result = runner.invoke(app, ["ask", "What is the capital of France?"])
    assert result.exit_code == 0 and "Paris" in result.stdout
    result = runner.invoke(app, ["ask", "--json", "--max-tokens", "4", "What is the capital of France?"])
    record = json.loads(result.stdout)
    prompt = "Question: What is the capital of France?\nAnswer:"  # a base model gets a completion prompt
    assert record["input_tokens"] == load_model("local").count_tokens(prompt) and record["spec"] == "local"


@pytest.mark.model
def test_ask_a_chat_model_sends_messages() -> None:
    result = runner.invoke(app, ["ask", "-m", "local:smollm2", "--json", "--max-tokens", "4", "Hi"])
    record = json.loads(result.stdout)
    assert record["input_tokens"] == load_model("local:smollm2").count_tokens([{"role": "user", "content": "Hi"}])
