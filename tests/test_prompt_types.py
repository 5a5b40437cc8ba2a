"""Prompt.render and Prompt.messages say what comes back for each format (typing.overload on a Literal format), and
Prompt.dumps gives any format named at run time as one string."""

from __future__ import annotations

import json
import types
import typing

import pytest

import litm.prompt._prompt as prompt_module
from litm.errors import PromptError
from litm.prompt import ChatTemplate, Prompt, build_prompt
from litm.prompt._formats import AnthropicArgs

DOCS = [{"id": "a", "text": "Paris is in France."}, {"id": "b", "text": "Lyon is in France."}]


def _returns(method: typing.Callable[..., object]) -> dict[str, object]:
    """Each overload's format literal -> its declared return type."""
    out: dict[str, object] = {}
    for overload in typing.get_overloads(method):
        hints = typing.get_type_hints(overload, vars(prompt_module))
        for fmt in typing.get_args(hints["format"]):
            out[fmt] = hints["return"]
    return out


@pytest.mark.parametrize("method", [Prompt.render, Prompt.messages])
def test_each_format_has_one_declared_return_type(method: typing.Callable[..., object]) -> None:
    # Before: one signature returning `str | list | dict` for every format.
    returns = _returns(method)
    assert returns == {
        "text": str, "chatml": str, "jinja": str, "openai": list[dict[str, str]], "anthropic": AnthropicArgs,
    }  # fmt: skip
    assert all(typing.get_origin(r) not in (typing.Union, types.UnionType) for r in returns.values())


def test_the_values_match_the_declared_types() -> None:
    p = build_prompt(DOCS, "Where is Paris?", system="Be brief.")
    assert isinstance(p.render("text"), str) and isinstance(p.render("chatml"), str)
    assert p.render("openai") == p.messages() == p.to_openai()
    args: AnthropicArgs = p.render("anthropic")
    assert set(args) == {"system", "messages"} and args["system"] == "Be brief."
    assert set(build_prompt(DOCS, "Why?").to_anthropic()) == {"messages"}  # no system: the key is absent


def test_dumps_is_one_string_for_a_format_named_at_run_time() -> None:
    template = ChatTemplate("{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}")
    p = build_prompt(DOCS, "Where is Paris?", system="Be brief.", chat_template=template)
    assert p.dumps("text") == p.text and p.dumps("chatml") == p.to_chatml() and p.dumps("jinja") == p.to_jinja()
    assert json.loads(p.dumps("openai")) == p.to_openai()
    assert json.loads(p.dumps("anthropic")) == p.to_anthropic()
    with pytest.raises(PromptError, match="unknown prompt format 'xml'"):
        p.dumps("xml")
