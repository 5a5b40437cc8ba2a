"""Code context on real JavaScript, TypeScript, Go, Rust and Java sources (vendored, see tests/data/code):
spans, name-based callers across files, class headers, imports, and the budget."""

from __future__ import annotations

import re

import pytest

from code_fixtures import DATA
from litm.code import CodeContext, CodeOptions, code_context
from litm.code._context import make_workspace
from litm.code._result import render_docs
from litm.errors import AmbiguousCodeTargetError, UnsupportedLanguageError
from litm.tokens import Tokenizer

BIG = 100_000

# (target, the callers that really call it, as (path, qualname)), checked by reading each file.
CASES = [
    ("js/semver/functions/compare.js::compare", {
        ("js/semver/functions/gt.js", "gt"), ("js/semver/functions/lt.js", "lt"),
        ("js/semver/functions/eq.js", "eq"), ("js/semver/functions/compare-loose.js", "compareLoose"),
    }),
    ("js/ms/index.js::fmtShort", {("js/ms/index.js", "<module>")}),
    ("ts/immer/src/utils/common.ts::each", {
        ("ts/immer/src/core/finalize.ts", "finalize"), ("ts/immer/src/core/current.ts", "currentImpl"),
    }),
    ("ts/immer/src/core/scope.ts::leaveScope", {("ts/immer/src/core/scope.ts", "revokeScope")}),
    ("go/persistent-https/client.go::Client.connect", {("go/persistent-https/client.go", "Client.Run")}),
    ("rust/hex/src/lib.rs::val", {
        ("rust/hex/src/lib.rs", "Vec.from_hex"), ("rust/hex/src/lib.rs", "decode_to_slice"),
    }),
    ("java/jpype/org/jpype/html/Parser.java::Parser.process", {
        ("java/jpype/org/jpype/html/Parser.java", "Parser.parse"),
    }),
]  # fmt: skip


def callers(ctx: CodeContext) -> set[tuple[str, str | None]]:
    return {(p.path, p.qualname) for p in ctx.pieces if p.kind == "caller"}


@pytest.fixture(scope="module")
def contexts(gpt4: Tokenizer) -> dict[str, CodeContext]:
    return {target: code_context(DATA, target, budget=BIG, counter=gpt4) for target, _ in CASES}


@pytest.mark.parametrize(("target", "expected"), CASES, ids=[t.split("::")[1] for t, _ in CASES])
def test_callers_by_name_across_files(contexts: dict[str, CodeContext], target: str,
                                      expected: set[tuple[str, str]]) -> None:  # fmt: skip
    ctx = contexts[target]
    assert ctx.resolution == "name" and all(p.resolution == "name" for p in ctx.pieces)
    assert expected <= callers(ctx)
    name = target.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
    for piece in ctx.pieces:
        if piece.kind == "caller":  # every call line shown really calls something by that name
            lines = (DATA / piece.path).read_text().splitlines()
            assert all(re.search(rf"\b{name}\s*[(<]", lines[n - 1]) for n in piece.call_lines)
            assert all(lines[n - 1] in piece.text.splitlines() for n in piece.call_lines)


def test_name_matching_is_labelled_and_over_counts(contexts: dict[str, CodeContext]) -> None:
    # compare-build.js calls the *method* SemVer.compare, not functions/compare.js; a name match counts it anyway.
    ctx = contexts["js/semver/functions/compare.js::compare"]
    assert ("js/semver/functions/compare-build.js", "compareBuild") in callers(ctx)
    assert ctx.to_dict()["resolution"] == "name"


def _brace_depths(text: str) -> list[int]:
    depth, out = 0, []
    for line in text.splitlines():
        line = re.sub(r"//.*$|\"(\\.|[^\"\\])*\"|'(\\.|[^'\\])*'|`[^`]*`", "", line)
        depth += line.count("{") - line.count("}")
        out.append(depth)
    return out


@pytest.mark.parametrize("folder", ["js", "ts", "go", "rust", "java"])
def test_spans_close_exactly_where_their_braces_do(folder: str) -> None:
    ws = make_workspace(DATA)
    checked = 0
    for path in sorted((DATA / folder).rglob("*.*")):
        if path.suffix not in (".js", ".ts", ".go", ".rs", ".java"):
            continue
        index = ws.index(path)
        for d in index.definitions:
            body = index.segment(d.name_line, d.end)
            if "{" not in body or (d.kind == "class" and folder == "go"):
                continue  # arrow functions without a block; Go types (checked by their fields below)
            depths = _brace_depths(body)
            opened = next(i for i, depth in enumerate(depths) if depth > 0 or "{" in body.splitlines()[i])
            depths = depths[opened:]  # from the line with the opening brace (a signature may span lines)
            assert depths[-1] == 0 and min(depths[:-1], default=1) > 0, f"{path.name} {d}"
            assert index.lines[d.name_line - 1].find(d.name, d.name_col) == d.name_col
            checked += 1
    assert checked >= 8


def test_class_header_and_imports(contexts: dict[str, CodeContext]) -> None:
    go = contexts["go/persistent-https/client.go::Client.connect"]
    header = next(p for p in go.pieces if p.kind == "class")
    assert header.text.startswith("type Client struct {") and header.text.endswith("}")  # the fields are the header
    imports = next(p for p in go.pieces if p.kind == "imports")
    assert '"net"' in imports.text and '"bufio"' not in imports.text  # connect uses net, not bufio
    java = contexts["java/jpype/org/jpype/html/Parser.java::Parser.process"]
    java_header = next(p for p in java.pieces if p.kind == "class").text
    assert java_header.startswith("/**") and "public class Parser<T>\n{\n// ... (" in java_header  # javadoc kept
    assert "import java.nio.ByteBuffer;" in next(p for p in java.pieces if p.kind == "imports").text
    callees = {p.qualname for p in java.pieces if p.kind == "callee"}
    assert {"Parser.flushTokens", "Parser.processToken"} <= callees


def test_budget_never_exceeded(gpt4: Tokenizer, contexts: dict[str, CodeContext]) -> None:
    for target in ("go/persistent-https/client.go::Client.connect", "ts/immer/src/utils/common.ts::each"):
        full = contexts[target]
        alone = gpt4.count(render_docs([full.target.to_doc()], "markdown"))
        for budget in (full.tokens - 1, (full.tokens + alone) // 2, alone):
            ctx = code_context(DATA, target, budget=budget, counter=gpt4, format="markdown")
            assert gpt4.count(ctx.render()) == ctx.tokens <= budget
            assert ctx.pieces[0].kind == "target" and ctx.pieces[0].text == full.target.text
            assert len(ctx.pieces) + len(ctx.dropped) == len(full.pieces)


def test_java_overloads_are_ambiguous_and_a_line_picks_one(gpt4: Tokenizer) -> None:
    with pytest.raises(AmbiguousCodeTargetError) as info:
        code_context(DATA, "java/jpype/org/jpype/html/Parser.java::Parser.parse", budget=BIG, counter=gpt4)
    assert len(info.value.candidates) == 2 and isinstance(info.value, LookupError)
    line = int(info.value.candidates[1].split(":")[1].split()[0])
    ctx = code_context(DATA, f"java/jpype/org/jpype/html/Parser.java:{line}", budget=BIG, counter=gpt4)
    assert ctx.target.qualname == "Parser.parse" and ctx.target.start == line


def test_exact_resolution_is_python_only(gpt4: Tokenizer) -> None:
    with pytest.raises(UnsupportedLanguageError, match="exact resolution is offered for Python only"):
        code_context(DATA, "rust/hex/src/lib.rs::val", budget=BIG, counter=gpt4,
                     options=CodeOptions(resolution="exact"))


def test_go_types_keep_their_fields() -> None:
    ws = make_workspace(DATA)
    index = ws.index(DATA / "go" / "persistent-https" / "client.go")
    client = next(d for d in index.definitions if d.qualname == "Client")
    text = index.segment(client.start, client.header_end)
    assert text.startswith("type Client struct {") and text.rstrip().endswith("}") and "ProxyBin" in text
    socket = next(d for d in ws.index(DATA / "go" / "persistent-https" / "socket.go").definitions
                  if d.qualname == "Socket.Dial")  # fmt: skip
    assert socket.start < socket.name_line  # its doc comment belongs to it
