"""Code context on the Python standard library: exact spans, real callers through imports and aliases,
no false callers from same-named functions, and a token budget that is never exceeded."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from code_fixtures import STDLIB
from litm.code import CodeContext, CodeOptions, code_context
from litm.code._context import make_workspace
from litm.errors import ContextBudgetExceeded, LitmError
from litm.tokens import Tokenizer

BIG = 100_000


def callers(ctx: CodeContext) -> set[tuple[str, str | None]]:
    return {(p.path, p.qualname) for p in (*ctx.pieces, *ctx.dropped) if p.kind == "caller"}


@pytest.fixture(scope="module")
def locale_ctx(stdlib_root: Path, gpt4: Tokenizer) -> CodeContext:
    return code_context(stdlib_root, "locale.py::normalize", budget=BIG, counter=gpt4)


def test_spans_match_inspect_getsourcelines() -> None:
    # Every function, method and class of these modules whose object inspect can find, compared line for line.
    modules = ["json.decoder", "json.encoder", "json.scanner", "email.utils", "email._encoded_words",
               "email.headerregistry", "locale", "quopri", "gettext"]  # fmt: skip
    ws = make_workspace(STDLIB)
    compared = 0
    for name in modules:
        module = importlib.import_module(name)
        path = Path(inspect.getsourcefile(module) or "")
        index = ws.index(path)
        seen = [d.qualname for d in index.definitions]
        for d in index.definitions:
            if seen.count(d.qualname) > 1:
                continue  # defined twice (locale.setlocale): an ambiguous target, tested on its own
            obj: Any = module
            for part in d.qualname.split("."):
                obj = vars(obj).get(part) if hasattr(obj, "__dict__") else None
            obj = getattr(obj, "__func__", obj)  # staticmethod / classmethod
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__qualname__ != d.qualname \
                    or not (inspect.isfunction(inspect.unwrap(obj)) or inspect.isclass(obj)):  # fmt: skip
                continue  # rebound at import time (e.g. to a C accelerator): not this definition
            try:
                if inspect.getsourcefile(obj) != str(path):
                    continue
            except TypeError:  # a class implemented in C under this name
                continue
            lines, first = inspect.getsourcelines(obj)
            assert (d.start, d.end) == (first, first + len(lines) - 1), f"{name}.{d.qualname}"
            assert index.segment(d.start, d.end) == "".join(lines).rstrip("\n")
            compared += 1
    assert compared >= 150


def test_target_piece_is_the_exact_source(locale_ctx: CodeContext) -> None:
    import locale

    lines, first = inspect.getsourcelines(locale.normalize)
    target = locale_ctx.pieces[0]
    assert target.kind == "target" and target.qualname == "normalize" and locale_ctx.resolution == "exact"
    assert target.text == "".join(lines).rstrip("\n")
    assert target.source == f"locale.py:{first}-{first + len(lines) - 1}"


def test_callers_through_imports_and_no_false_callers(locale_ctx: CodeContext, stdlib_root: Path,
                                                      gpt4: Tokenizer) -> None:  # fmt: skip
    # locale.normalize is called by locale itself and by gettext (import locale; locale.normalize(...)).
    assert callers(locale_ctx) == {
        ("gettext.py", "_expand_lang"), ("locale.py", "_parse_localename"), ("locale.py", "setlocale"),
    }  # fmt: skip
    # unicodedata.normalize in stringprep and traceback's own nested normalize resolve elsewhere.
    rejected = {r.split(":")[0] for r in locale_ctx.rejected}
    assert {"stringprep.py", "traceback.py"} <= rejected
    # Matching by name, as aider's tags do, counts exactly those as callers.
    by_name = code_context(stdlib_root, "locale.py::normalize", budget=BIG, counter=gpt4,
                           options=CodeOptions(resolution="name"))
    assert by_name.resolution == "name"
    false = callers(by_name) - callers(locale_ctx)
    assert ("stringprep.py", "map_table_b2") in false
    assert any(path == "traceback.py" for path, _ in false)
    assert all(p.to_doc().metadata["resolution"] == "name" for p in by_name.pieces)


def test_caller_pieces_hold_the_call(locale_ctx: CodeContext, stdlib_root: Path) -> None:
    for piece in locale_ctx.pieces:
        if piece.kind != "caller":
            continue
        source = (stdlib_root / piece.path).read_text().splitlines()
        assert piece.call_lines and all("normalize(" in source[n - 1] for n in piece.call_lines)
        assert all(source[n - 1] in piece.text.splitlines() for n in piece.call_lines)


def test_alias_import_is_followed(stdlib_root: Path, gpt4: Tokenizer) -> None:
    # email/encoders.py: "from quopri import encodestring as _encodestring", then _encodestring(s, ...).
    ctx = code_context(stdlib_root, "quopri.py::encodestring", budget=BIG, counter=gpt4)
    caller = next(p for p in ctx.pieces if p.kind == "caller" and p.path == "email/encoders.py")
    assert caller.qualname == "_qencode" and "_encodestring(s, quotetabs=True)" in caller.text
    by_name = code_context(stdlib_root, "quopri.py::encodestring", budget=BIG, counter=gpt4,
                           options=CodeOptions(resolution="name"))
    assert ("email/encoders.py", "_qencode") not in callers(by_name)


def test_method_callers_through_inferred_instances(json_root: Path, gpt4: Tokenizer) -> None:
    # json.loads calls _default_decoder.decode(s) and cls(**kw).decode(s); bytes.decode calls elsewhere do not count.
    ctx = code_context(json_root, "json/decoder.py::JSONDecoder.decode", budget=BIG, counter=gpt4)
    assert callers(ctx) == {("json/__init__.py", "loads")}
    loads = next(p for p in ctx.pieces if p.kind == "caller")
    source = (json_root / "json" / "__init__.py").read_text().splitlines()
    called = [source[n - 1].strip() for n in loads.call_lines]
    assert called == ["return _default_decoder.decode(s)", "return cls(**kw).decode(s)"]
    assert any(r.startswith("quopri.py:") for r in ctx.rejected)
    kinds = [p.kind for p in ctx.pieces]
    assert kinds[:2] == ["target", "class"] and "callee" in kinds
    assert next(p for p in ctx.pieces if p.kind == "class").text.startswith("class JSONDecoder(object):")
    callee = {p.qualname for p in ctx.pieces if p.kind == "callee"}
    assert {"JSONDecoder.raw_decode", "JSONDecodeError"} <= callee


def test_imports_piece_holds_what_the_target_uses(stdlib_root: Path, gpt4: Tokenizer) -> None:
    ctx = code_context(stdlib_root, "email/utils.py::format_datetime", budget=BIG, counter=gpt4)
    imports = next(p for p in ctx.pieces if p.kind == "imports")
    assert "import datetime" in imports.text
    assert "import socket" not in imports.text  # email.utils imports socket, format_datetime does not use it


def target_alone(gpt4: Tokenizer) -> tuple[str, int]:
    """The source of locale.normalize and what it costs rendered alone, computed from inspect, not from litm."""
    import locale

    lines, first = inspect.getsourcelines(locale.normalize)
    source = f"locale.py:{first}-{first + len(lines) - 1}"
    return source, gpt4.count(f"==> {source} (target: normalize) <==\n" + "".join(lines).rstrip("\n"))


def test_budget_is_counted_on_the_rendered_context(locale_ctx: CodeContext, stdlib_root: Path,
                                                   gpt4: Tokenizer) -> None:  # fmt: skip
    full, (_, alone) = locale_ctx.tokens, target_alone(gpt4)
    assert alone < full
    for budget in (full - 1, (alone + full) // 2):  # random budgets: the property test below
        ctx = code_context(stdlib_root, "locale.py::normalize", budget=budget, counter=gpt4)
        assert gpt4.count(ctx.render()) == ctx.tokens <= budget
        assert ctx.pieces[0].kind == "target"
        assert [p.rank for p in ctx.pieces] == list(range(1, len(ctx.pieces) + 1))
        assert all(d.rank > ctx.pieces[-1].rank for d in ctx.dropped)
    assert full == gpt4.count(locale_ctx.render()) and not locale_ctx.dropped


def test_target_larger_than_budget_is_a_typed_error(stdlib_root: Path, gpt4: Tokenizer) -> None:
    _, alone = target_alone(gpt4)
    with pytest.raises(ContextBudgetExceeded) as info:
        code_context(stdlib_root, "locale.py::normalize", budget=alone - 1, counter=gpt4)
    assert isinstance(info.value, ValueError) and isinstance(info.value, LitmError)
    assert type(info.value).__name__ == "CodeTargetTooLargeError"
    assert info.value.target_tokens == alone  # type: ignore[attr-defined]
    assert f"alone needs {alone} tokens, over the budget of {alone - 1}" in str(info.value)
    # Exactly the target's own cost fits, with nothing else.
    ctx = code_context(stdlib_root, "locale.py::normalize", budget=alone, counter=gpt4)
    assert [p.kind for p in ctx.pieces] == ["target"] and ctx.tokens == alone


def test_docs_place_the_target_next_to_the_question(locale_ctx: CodeContext, gpt4: Tokenizer) -> None:
    import litm
    from litm.prompt import build_prompt

    docs = locale_ctx.docs()
    source, _ = target_alone(gpt4)
    start, end = (int(x) for x in source.split(":")[1].split("-"))
    assert len(docs) >= 4 and docs[0].metadata["kind"] == "target"
    assert docs[0].source == source and docs[0].metadata["lines"] == [[start, end]]
    assert litm.place(docs, strategy="pyramid").items[-1].id == docs[0].id
    prompt = build_prompt(docs, "Why does normalize drop the modifier?", strategy="pyramid")
    assert prompt.ids[-1] == docs[0].id
    assert locale_ctx.render().rstrip().endswith(locale_ctx.pieces[0].text)


def test_whole_prompt_budget_with_a_prompt_builder(stdlib_root: Path, gpt4: Tokenizer) -> None:
    from litm.prompt import PromptBuilder

    builder = PromptBuilder()  # code_context places the pieces (order="pyramid": the target last)
    question = "Is it safe to make normalize() lower-case the encoding?"
    ctx = code_context(stdlib_root, "locale.py::normalize", budget=900, counter=gpt4, builder=builder,
                       question=question)  # fmt: skip
    assert ctx.prompt is not None and gpt4.count(ctx.prompt.text) == ctx.tokens <= 900
    assert ctx.prompt.ids[-1] == ctx.pieces[0].id and ctx.dropped


def test_line_target_and_to_dict(stdlib_root: Path, gpt4: Tokenizer) -> None:
    ctx = code_context(stdlib_root, "quopri.py:110", budget=BIG, counter=gpt4)
    assert ctx.target.qualname == "encodestring"
    data = ctx.to_dict()
    assert data["target"] == ctx.target.source and data["resolution"] == "exact" and data["budget"] == BIG
    assert data["tokens"] == ctx.tokens and data["tokenizer"] == "bpe-openai:cl100k_base"
    assert data["pieces"][0]["kind"] == "target"
    assert {"id", "source", "text", "lines", "rank", "score", "kind"} <= set(data["pieces"][0])


@pytest.fixture(scope="module")
def locale_pieces(stdlib_root: Path) -> list[Any]:
    from litm.code._context import gather
    from litm.code._pyjedi import JediResolver
    from litm.code._target import locate, parse_target

    ws = make_workspace(stdlib_root)
    file = ws.index(stdlib_root / "locale.py")
    return gather(ws, file, locate(file, parse_target("locale.py::normalize")), JediResolver(ws)).pieces


@settings(max_examples=40)
@given(extra=st.integers(min_value=0, max_value=900), fmt=st.sampled_from(["text", "markdown"]),
       order=st.sampled_from(["pyramid", "edges", "none", "reverse"]))  # fmt: skip
def test_random_budgets_never_exceeded_and_keep_the_target(locale_pieces: list[Any], gpt4: Tokenizer, extra: int,
                                                           fmt: str, order: str) -> None:  # fmt: skip
    from litm.code._fitting import fit_pieces
    from litm.code._result import render_docs

    alone = gpt4.count(render_docs([locale_pieces[0].to_doc()], fmt, order))
    budget = alone + extra
    out = fit_pieces(locale_pieces, counter=gpt4, budget=budget, fmt=fmt, order=order)
    assert out.tokens <= budget and out.tokens == gpt4.count(render_docs(out.kept, fmt, order))
    assert out.kept[0].id == locale_pieces[0].id  # the target, never cut
    assert [d.text for d in out.kept] == [p.text for p in locale_pieces[: len(out.kept)]]
    if out.dropped:  # lowest-ranked go first, and the best dropped piece would not have fitted
        assert gpt4.count(render_docs([*out.kept, out.dropped[0]], fmt, order)) > budget


def test_long_callers_are_cut_to_the_lines_around_their_calls(stdlib_root: Path, gpt4: Tokenizer) -> None:
    ctx = code_context(stdlib_root, "locale.py::normalize", budget=BIG, counter=gpt4,
                       options=CodeOptions(max_caller_lines=10))
    expand = next(p for p in ctx.pieces if p.qualname == "_expand_lang")
    source = (stdlib_root / "gettext.py").read_text().splitlines()
    (call,) = expand.call_lines
    shown = [n for a, b in expand.ranges for n in range(a, b + 1)]
    assert source[expand.start - 1].startswith("def _expand_lang(") and call in shown
    assert set(range(max(call - 3, expand.start), call + 4)) <= set(shown) and len(shown) < 20
    full = next(p for p in code_context(stdlib_root, "locale.py::normalize", budget=BIG, counter=gpt4).pieces
                if p.qualname == "_expand_lang")  # fmt: skip
    assert not full.excerpt and expand.excerpt and expand.omitted == len(full.text.splitlines()) - len(shown)
    assert f"# ... ({expand.omitted} lines omitted)" in expand.text
    assert source[call - 1] in expand.text.splitlines()


def test_stub_hits_of_the_same_definition_count(stdlib_root: Path, gpt4: Tokenizer) -> None:
    # jedi's goto stops at typeshed's email/message.pyi for self.set_default_type() in MIMEMessage.__init__.
    ctx = code_context(stdlib_root, "email/message.py::Message.set_default_type", budget=BIG, counter=gpt4)
    assert callers(ctx) == {("email/mime/message.py", "MIMEMessage.__init__"),
                            ("email/feedparser.py", "FeedParser._new_message")}  # fmt: skip
