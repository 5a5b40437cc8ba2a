"""Code context works with the network blocked: grammars come from the pinned wheel, jedi is pure Python.

A fresh interpreter (nothing cached from other tests) replaces the socket API with one that refuses every
connection and DNS lookup, checks that the guard really refuses, then parses real JavaScript, TypeScript,
Go, Rust and Java files and resolves a Python target with jedi.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

from code_fixtures import DATA, STDLIB

SCRIPT = r"""
import json, socket, sys
from pathlib import Path

def refuse(*args, **kwargs):
    raise OSError("network blocked by test_code_offline")

class NoSocket(socket.socket):
    def connect(self, *args, **kwargs):
        refuse()
    def connect_ex(self, *args, **kwargs):
        refuse()

socket.socket = NoSocket
socket.create_connection = refuse
socket.getaddrinfo = refuse
import urllib.request
try:
    urllib.request.urlopen("https://pypi.org/simple/", timeout=2)
    guard = "open"
except OSError as exc:
    guard = "blocked" if "network blocked" in str(exc) or "network blocked" in str(exc.__cause__ or exc) else repr(exc)

from litm.code import code_context
from litm.code._context import make_workspace
from litm.code._source import language_of

data, stdlib = Path(sys.argv[1]), Path(sys.argv[2])
ws = make_workspace(data)
parsed = {}
for path in sorted(data.rglob("*")):
    lang = language_of(path)
    if lang is not None:
        index = ws.index(path)
        parsed[lang] = parsed.get(lang, 0) + len(index.definitions)
ctx = code_context(stdlib, "json/decoder.py::JSONDecoder.raw_decode", budget=5000, counter=len)
print(json.dumps({"guard": guard, "parsed": parsed, "resolution": ctx.resolution,
                  "callers": sorted(p.qualname for p in ctx.pieces if p.kind == "caller")}))
"""


def test_parses_and_resolves_with_sockets_blocked() -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(DATA), str(STDLIB)], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["guard"] == "blocked"
    assert set(out["parsed"]) == {"javascript", "typescript", "go", "rust", "java"}
    assert all(n >= 3 for n in out["parsed"].values())
    assert out["resolution"] == "exact" and "JSONDecoder.decode" in out["callers"]


def test_grammar_pack_is_the_offline_release() -> None:
    # 1.0 and later download grammars at first parse; the code extra pins the release that bundles them.
    assert version("tree-sitter-language-pack") == "0.13.0"


def test_missing_extra_names_the_install_command() -> None:
    script = (
        "import sys\n"
        "sys.modules['jedi'] = None; sys.modules['tree_sitter_language_pack'] = None\n"
        "from litm.code import code_context\n"
        "from litm.errors import MissingDependencyError\n"
        "for target in ('json/decoder.py::JSONDecoder.decode', 'js/ms/index.js::plural'):\n"
        "    root = sys.argv[1] if target.startswith('json') else sys.argv[2]\n"
        "    try:\n"
        "        code_context(root, target, budget=100, counter=len)\n"
        "    except MissingDependencyError as exc:\n"
        "        print(exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(STDLIB), str(DATA)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2 and all("pip install 'litm[code]'" in line for line in lines)
    assert "jedi" in lines[0] and "tree-sitter" in lines[1]
