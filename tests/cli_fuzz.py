"""A fuzzer for the ``litm`` command line, run in process: the engine of tests/test_cli_fuzz.py and scripts/fuzz_cli.py.

A case is one command (walked from the Typer app, so a new command is fuzzed without editing this file), an
argument list drawn parameter by parameter from the parameter's type (valid values, boundaries, malformed
text, huge numbers, undecodable bytes as Python hands them to ``sys.argv``), and stdin bytes of the same
kinds; a third of the cases are valid throughout and a third have one bad value, so that commands run past
their parsing. It runs through :func:`litm.cli.main`, the console-script entry point, inside Typer's test
isolation, in a workspace folder of input files (and an index, a ledger and a probe run made by the library)
that is the working directory. The contract a case is held to:

* the exit status is 0 or 2, and nothing escapes ``main()`` (which a user would see as a traceback);
* on exit 2, stderr is one ``litm: error:`` line (after the progress lines of a run that got under way);
* no partial file: nothing the run leaves in the workspace is an atomic writer's temporary file, an empty
  file, a JSON file that does not parse or a JSON Lines file with a torn line, and a failed run changes no
  file that was there before it;
* no state from a failed run: it creates no file outside the output folder it was given (or ``litm-out``).

Real models and the network are out of bounds. ``--model`` is always given, and only as a spec of the scripted
backend registered here (``fuzzfake``, :class:`litm.probe._testing.DeadZoneModel`) or as a malformed spec that
:func:`litm.models.parse_spec` refuses; while a case runs, the built-in backends are replaced by a tripwire and
``socket.connect`` refuses anything but loopback and ``socket.bind`` everything, all raising
:class:`HarnessLeak` (a ``BaseException``, so no ``except Exception`` in litm can hide it) if a generator ever
lets a real model, a connection or a server through.
"""

from __future__ import annotations

import atexit
import base64
import enum
import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import sys
import tempfile
import traceback
import typing
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import typer.main
from typer.testing import CliRunner

from litm.cli import app, main
from litm.models import register_backend, unregister_backend
from litm.models._spec import ModelSpec, backends
from litm.probe._testing import DeadZoneModel

__all__ = [
    "COMMANDS",
    "Case",
    "HarnessLeak",
    "Outcome",
    "build_workspace",
    "commands",
    "draw_case",
    "run_case",
    "sandbox",
]

FAKE_SCHEME = "fuzzfake"
#: Specs that load the scripted model (a local one, and one that looks like an API model to the probe).
FAKE_SPECS = (f"{FAKE_SCHEME}:m", f"{FAKE_SCHEME}:remote", f"{FAKE_SCHEME}:m ")
#: Specs that :func:`litm.models.parse_spec` refuses before any backend is reached.
BAD_SPECS = (
    "", " ", "bogus:x", "nocolon", "local:", "local:nope", "LOCAL:", "openai:", "anthropic: ",
    "openai-compatible:http://127.0.0.1:1/v1@", "openai-compatible:ftp://x@m", "openai-compatible:nourl",
    f"{FAKE_SCHEME}", ":m", "\udcff:x", "local:\udcff",
)  # fmt: skip

INTS = ("0", "1", "2", "3", "-1", "7", "64", "-0", "+3", "1e3", "3.5", "abc", "", " 4", "0x10", "٣",
        "99999999999999999999", "-99999999999999999999", "9" * 5000)  # fmt: skip
#: Values for options whose size is work (a count of trials, questions, documents): never a huge valid one,
#: or the case would measure the machine instead of the parser.
SMALL_INTS = ("0", "1", "2", "3", "-1", "-0", "abc", "", "1.5", "99999999999999999999x", "-99999999999999999999")
FLOATS = ("0", "0.5", "1", "-0.1", "1.01", "nan", "inf", "-inf", "1e308", "1e999", "abc", "", "0x1p-2", "1_0")
TEXTS = ("", " ", "x", "who won?", "a\nb", "\t", "é ü 中文", "\udcff\udcfe", "-", "--", "-x", "%s {0} {{x}}",
         "x" * 5000, "'\"<doc>", "\u2028", "\x1b[31m")  # fmt: skip

#: Option values that keep a case inside the sandbox: always one of these, never a generic value.
PINNED: dict[str, tuple[str, ...]] = {
    "--model": FAKE_SPECS * 3 + BAD_SPECS,
    "--retriever": ("bm25", "file", "bogus", ""),
    "--backend": ("numpy",),
}
#: Options never given: each loads the dense embedding model.
NEVER = frozenset({"--rerank", "--dense"})
#: Options always given (with a pinned value), because their default loads a real model.
ALWAYS = frozenset({"--model"})
_ALWAYS_FLAGS = frozenset({"--model", "-m"})
COST = frozenset({"--trials", "--questions", "--direct", "--ablation", "--n", "--k", "--min-trials", "--max-tokens",
                  "--limit", "--threads", "--concurrency", "--batch", "--max-caller-lines", "--budget"})  # fmt: skip
#: Options always given, because their default is a lot of work for a case (100 questions, 10 trials a cell).
WORK = frozenset({"--trials", "--questions", "--direct", "--ablation", "--lengths"})
#: Valid-looking values for string options, drawn part of the time so cases get past parsing.
HINTS: dict[str, tuple[str, ...]] = {
    "--lengths": ("64", "64,128", "32", "1k", "16", "15", "0", "abc", "", "64,,", "2.5k", "1e3", "99999999999"),
    "--depths": ("0,0.5,1", "linear:3", "edge:3", "linear:1", "1.5", "a", "", "nan", "linear:99999999999999"),
    "--layouts": ("plain", "plain,buffered", "bogus", "", ","),
    "--task": ("needle", "multi", "kv", "bogus", "", "needle,chain"),
    "--strategy": ("none", "edges", "pyramid", "profile", "langchain", "bogus", ""),
    "--strategies": ("none,edges", "pyramid", "bogus", ""),
    "--question": ("who won?", "What is the access code for the Kivo vault?", "", " "),
    "--k": ("2", "3", "4", "0", "-1", "a", "2,3", ""),
    "--data": ("bench.jsonl", "nq", "hotpotqa", "bogus", "missing.jsonl", "bad-bench.jsonl", "docs.jsonl"),
    "--arms": ("default", "bracket", "bogus", ""),
    "--format": ("text", "openai", "anthropic", "chat", "auto", "completion", "bogus", ""),
    "--likelihood": ("auto", "on", "off", "bogus"),
    "--reuse": ("aligned", "full", "cold", "bogus"),
    "--builtin": ("edges", "pyramid", "flat", "bogus", ""),
    "--order": ("pyramid", "none", "bogus"),
    "--scope": ("project:a", "", "bad scope", "a:b:c"),
    "--namespace": ("default", "", "x" * 300),
    "--direct-ranks": ("1", "1,2", "0", "a", ""),
    "--ablation-slots": ("1", "1,2", "0", "a"),
    "--ablation-designs": ("middle", "bogus"),
    "--title": ("t", "", "<script>"),
}
#: Positional values that name a thing rather than a file, by parameter name.
ARG_HINTS: dict[str, tuple[str, ...]] = {
    "question": ("who won?", "-", "", " ", "What is the access code for the Kivo vault?"),
    "query": ("vault", "", "   ", "x" * 3000),
    "target": ("code.py::f", "code.py:2", "code.py::Nope", "missing.py::f", "code.py", "::", "code.py:0",
               "code.py:99999999999999999999", "docs-dir::f"),
    "ledger": ("spend.db", "missing.db", "docs.jsonl", "binary.bin", "docs-dir", "redis://127.0.0.1:1/0",
               "redis://127.0.0.1:99999/0", "redis://127.0.0.1:abc/0", "redis://[::1", "redis://127.0.0.1:1/abc"),
    "scope": ("project:a", "", "bad scope", "a:b:c", "x" * 300),
    "amount": ("5", "5.00", "5,00", "-1", "1e3", "nan", "", "99999999999999999999", "0.0000001"),
}  # fmt: skip

#: Values that make sense for an option (keyed by "command option" first, then by option), so that "valid" and
#: "one bad value" cases get past parsing into what the command does. An option missing here gets a valid value
#: of its type (a number in its range, a member of its choice, a documents file).
VALID: dict[str, tuple[str, ...]] = {
    "--model": FAKE_SPECS[:1],
    "--question": ("What is the access code for the Kivo vault?",),
    "--lengths": ("64", "64,128"),
    "--depths": ("0,0.5,1", "linear:3"),
    "--task": ("needle",),
    "--layouts": ("plain",),
    "--strategy": ("none", "edges", "pyramid"),
    "--strategies": ("none,edges",),
    "--budget": ("400", "2000"),
    "--profile": ("profile.json",),
    "--corpus": ("docs-dir",),
    "--chat-template": ("template.jinja",),
    "--data": ("bench.jsonl",),
    "--retriever": ("bm25", "file"),
    "--builtin": ("edges", "pyramid"),
    "--scope": ("project:a",),
    "--namespace": ("default",),
    "--title": ("results",),
    "--include": ("probe-done",),
    "--name": ("alice",),
    "--window": ("total", "daily"),
    "--format": ("text",),
    "--likelihood": ("off",),
    "--reuse": ("cold",),
    "--order": ("pyramid",),
    "--arms": ("default",),
    "--ablation-designs": ("middle",),
    "--direct-ranks": ("1",),
    "--ablation-slots": ("1",),
    "--special-token": ("<|im_end|>",),
    "--trials": ("1", "2"),
    "--questions": ("1", "2"),
    "--direct": ("0", "1"),
    "--ablation": ("0", "1"),
    "--max-tokens": ("8", "16"),
    "--n": ("4", "10"),
    "probe --template": ("probe-template.txt",),
    "prompt --template": ("prompt-template.json",),
    "bench --k": ("2", "3"),
    "probe --k": ("2", "3"),
    "keys create --limit": ("5",),
}
ARG_VALID: dict[str, tuple[str, ...]] = {
    "path": ("docs.jsonl", "docs.json", "pairs.jsonl", "-"),
    "question": ("What is the access code for the Kivo vault?",),
    "query": ("vault", "access code"),
    "target": ("code.py::f", "code.py::g", "code.py:2"),
    "ledger": ("spend.db",),
    "scope": ("project:a",),
    "amount": ("5", "12.50"),
    "folder": ("docs-dir",),
    "index": ("idx",),
    "profile": ("profile.json",),
    "a": ("profile.json",),
    "b": ("profile.json",),
    "out": ("good-run", "probe-done"),
    "directory": ("probe-done",),
}

#: Workspace entries: name -> bytes (a str value names a folder made by :func:`build_workspace`).
_DOCS = [{"id": f"d{i}", "text": f"Passage {i}. The access code for the Kivo vault is 12345{i}.", "score": 1 / (i + 1)}
         for i in range(6)]  # fmt: skip
_BENCH = {
    "id": "q1", "question": "What is the access code for the Kivo vault?", "answers": ["123450"],
    "documents": [{"text": "The access code for the Kivo vault is 123450.", "gold": True},
                  *({"text": f"Filler passage {i}."} for i in range(5))],
}  # fmt: skip

_PROBE_ROWS = [
    *({"key": f"trial|needle|64|{d}|{t}|plain", "task": "needle", "kind": "trial", "depth": d, "length": 64,
       "layout": "plain", "hit": t == 0, "trial": t} for d in (0.0, 0.5, 1.0) for t in range(2)),
    {"key": "closed_book|needle|0", "task": "needle", "kind": "closed_book", "hit": False, "trial": 0},
]  # fmt: skip

FILES: dict[str, bytes] = {
    "docs.jsonl": "".join(json.dumps(d) + "\n" for d in _DOCS).encode(),
    "docs.json": json.dumps(_DOCS).encode(),
    "pairs.jsonl": b'["alpha", 0.9]\n["beta", 0.1]\n[{"id": "g", "text": "gamma"}, 0.5]\n',
    "empty.txt": b"",
    "blank.jsonl": b"\n \n\t\n",
    "bad.json": b'{"text": "a"\n',
    "binary.bin": bytes(range(256)) * 4,
    "latin1.txt": "caf\xe9 na\xefve\n".encode("latin-1"),
    "bom.jsonl": b'\xef\xbb\xbf{"text": "a"}\n',
    "deep.json": b"[" * 100_000,
    "surrogate.jsonl": b'{"id": "\\ud800", "text": "lone \\udfff surrogate"}\n',
    "nan.jsonl": b'{"text": "a", "score": NaN}\n{"text": "b", "score": Infinity}\n',
    "bigint.jsonl": b'{"text": "a", "score": 1' + b"0" * 400 + b'}\n{"text": "b", "score": 1' + b"0" * 5000 + b"}\n",
    "scalars.jsonl": b'1\nnull\ntrue\n"text"\n[]\n{}\n',
    "crlf.jsonl": b'{"text": "a"}\r\n{"text": "b"}\r\n',
    "bench.jsonl": (json.dumps(_BENCH) + "\n").encode(),
    "bad-bench.jsonl": b'{"question": "q", "answers": ["a"], "documents": [{"text": "t", "gold": true, "score": 1'
    + b"0" * 400
    + b"}]}\n",
    "probe-template.txt": b"Read this.\n\n{document}\n\nQuestion: {question}\nAnswer:",
    "template.jinja": b"{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}",
    "bad-template.jinja": b"{% for m in messages %}{{ m.content ",
    "fake.gguf": b"GGUF" + bytes(60),
    "prompt-template.json": b'{"question_label": "Q"}',
    "code.py": b"def f(x):\n    return g(x)\n\n\ndef g(y):\n    return f(y) + 1\n",
    "bad.py": b"def f(:\n",
    "messages.json": b'[{"role": "user", "content": "hi"}]',
    "new\nline.jsonl": b'{"text": "a"}\n',
    "docs-dir/a.md": b"# Vault\n\nThe access code for the Kivo vault is 123456.\n",
    "docs-dir/b.txt": b"Another note about nothing in particular.\n",
    "empty-dir/.keep": b"",
    "probe-run/results.jsonl": b'{"key": "a", "hit": true}\n{"key": "b", "hit": fal',
    "probe-run/run.json": b'{"identity": {}, "config": {}}',
    "torn-run/results.jsonl": b'{"key": "a"}\n\xff\xfe garbage\n',
    "torn-run/run.json": b"{not json",
    "good-run/results.jsonl": "".join(json.dumps(r) + "\n" for r in _PROBE_ROWS).encode(),
    "good-run/run.json": json.dumps(
        {"identity": {}, "model": {"name": "m"}, "config": {"tasks": ["needle"], "lengths": [64]}}
    ).encode(),
    "list-run/results.jsonl": "".join(json.dumps(r) + "\n" for r in _PROBE_ROWS).encode(),
    "list-run/run.json": b'[{"model": "m"}]',
}
#: Path values that are not files of the workspace.
PATHS = ("missing.jsonl", "missing/deeper/x.json", "-", "", "docs.jsonl/inside", "/proc/litm-fuzz/x", ".", "..",
         "\udcff.jsonl")  # fmt: skip
OUT_PATHS = ("out", "out/nested/deeper", "fresh.json", "docs-dir", "empty-dir", "docs.jsonl", "docs.jsonl/inside",
             "/proc/litm-fuzz/out")  # fmt: skip
STDINS: dict[str, bytes] = {
    "none": b"",
    "docs": FILES["docs.jsonl"],
    "array": FILES["docs.json"],
    "pairs": FILES["pairs.jsonl"],
    "text": b"What is the access code for the Kivo vault?\n",
    "malformed": FILES["bad.json"],
    "non-utf8": b'{"text": "caf\xe9"}\n\xff\xfe\x00',
    "deep": FILES["deep.json"],
    "surrogate": FILES["surrogate.jsonl"],
    "nan": FILES["nan.jsonl"],
    "bigint": FILES["bigint.jsonl"],
    "scalars": FILES["scalars.jsonl"],
    "messages": FILES["messages.json"],
    "nul": b'{"text": "a\x00b"}\n',
}


def _profile_bytes() -> bytes:
    return (resources.files("litm") / "data" / "profile-gemma3-270m-nq-k10.json").read_bytes()


def build_workspace(folder: Path, *, huge_bytes: int = 200_000) -> Path:
    """Write the input files every case may name into ``folder`` (the case's working directory)."""
    for name, data in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (folder / "profile.json").write_bytes(_profile_bytes())
    (folder / "profile-bad.json").write_bytes(b'{"format": "litm-position-profile", "points": [[2, "x"]]}')
    shutil.copytree(_made_once(), folder, dirs_exist_ok=True)
    huge = _huge_file(huge_bytes)
    try:  # a hard link: a large run makes thousands of workspaces (a command that rewrites it replaces the link)
        os.link(huge, folder / "huge.jsonl")
    except OSError:
        shutil.copyfile(huge, folder / "huge.jsonl")
    return folder


_HUGE: dict[int, Path] = {}
_MADE: list[Path] = []


def _made_once() -> Path:
    """State that commands read, made once by the library itself and copied into every workspace: a BM25
    index of ``docs-dir`` (``idx``), a spend ledger with one limit (``spend.db``) and a finished probe run
    (``probe-done``)."""
    if _MADE and _MADE[0].exists():
        return _MADE[0]
    from litm.probe._outputs import write_outputs
    from litm.retrieve import build_index
    from litm.spend._ledger import SQLiteLedger

    folder = Path(tempfile.mkdtemp(prefix="litm-fuzz-made-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    docs = folder / "docs"
    docs.mkdir()
    for name, data in FILES.items():
        if name.startswith("docs-dir/"):
            (docs / name.removeprefix("docs-dir/")).write_bytes(data)
    build_index(docs, folder / "idx", dense=False)
    shutil.rmtree(docs)
    done = folder / "probe-done"
    done.mkdir()
    settings = json.loads(FILES["good-run/run.json"])
    write_outputs(done, _PROBE_ROWS, settings, plots=False, report=False)
    (done / "run.json").write_bytes(FILES["good-run/run.json"])
    (done / "results.jsonl").write_bytes(FILES["good-run/results.jsonl"])
    ledger = SQLiteLedger(folder / "spend.db")
    ledger.set_limit("project:a", "total", 5_000_000)
    ledger.close()
    _MADE[:] = [folder]
    return folder


def huge_bytes_of(size: int) -> bytes:
    """About ``size`` bytes of valid JSON Lines documents."""
    line = json.dumps({"text": "word " * 50}).encode() + b"\n"
    return line * max(1, size // len(line))


def _huge_file(size: int) -> Path:
    if size not in _HUGE or not _HUGE[size].exists():
        folder = Path(tempfile.mkdtemp(prefix="litm-fuzz-huge-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _HUGE[size] = folder / "huge.jsonl"
        _HUGE[size].write_bytes(huge_bytes_of(size))
    return _HUGE[size]


# -- the commands --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Command:
    """One runnable command: its words after ``litm`` and its parameters."""

    path: tuple[str, ...]
    params: tuple[Any, ...]

    @property
    def name(self) -> str:
        return " ".join(self.path) or "litm"


#: Commands left out, with the reason: a server runs until it is stopped, so no case of it could end.
EXCLUDED = {"serve": "runs until it is stopped"}


def commands() -> list[Command]:
    """Every command of the Typer app (a group that runs by itself, like ``litm probe``, counts too).

    The commands in :data:`EXCLUDED` are left out.
    """
    out: list[Command] = []

    def walk(cmd: Any, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if " ".join(path) in EXCLUDED:
            return
        if subs is None or getattr(cmd, "invoke_without_command", False):
            out.append(Command(path, tuple(cmd.params)))
        for name, sub in sorted((subs or {}).items()):
            if not getattr(sub, "hidden", False):
                walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return out


COMMANDS = commands()


# -- drawing a case ------------------------------------------------------------------------------------------
@dataclass
class Case:
    """A command line and its stdin."""

    argv: list[str]
    stdin: bytes = b""
    stdin_kind: str = "none"

    def to_json(self) -> dict[str, Any]:
        return {"argv": self.argv, "stdin_b64": base64.b64encode(self.stdin).decode(), "stdin_kind": self.stdin_kind}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Case:
        return cls(list(data["argv"]), base64.b64decode(data.get("stdin_b64", "")), data.get("stdin_kind", "?"))


def _annotation(param: Any) -> Any:
    ann = param.type_descriptor.annotation
    args = typing.get_args(ann)
    return args[0] if args and typing.get_origin(ann) in (list, tuple) else ann


def _long(param: Any) -> str:
    return max(param.opts, key=len)


def _value(rng: random.Random, param: Any, *, is_out: bool) -> str:
    name = _long(param)
    if name in PINNED:
        return rng.choice(PINNED[name])
    ann = _annotation(param)
    hints = HINTS.get(name) if param.param_type_name == "option" else ARG_HINTS.get(param.name)
    if hints and rng.random() < 0.7:
        return rng.choice(hints)
    if isinstance(ann, type) and issubclass(ann, enum.Enum):
        good = [str(m.value) for m in ann]
        return rng.choice([*good, *good, "bogus", "", good[0].upper()])
    if ann is bool:
        return rng.choice(("true", "false", "maybe", ""))
    if ann is int:
        if name not in COST and rng.random() < 0.2:
            return str(rng.randint(-(10 ** rng.randint(0, 30)), 10 ** rng.randint(0, 30)))
        return rng.choice(SMALL_INTS if name in COST else INTS)
    if ann is float:
        return repr(rng.uniform(-2, 2)) if rng.random() < 0.2 else rng.choice(FLOATS)
    if ann is Path:
        if is_out:
            return rng.choice(OUT_PATHS)
        folders = ("docs-dir", "empty-dir", "probe-run", "torn-run", "good-run", "list-run")
        return rng.choice((*FILES, "profile.json", "profile-bad.json", "huge.jsonl", *PATHS, *folders, *folders))
    return random_text(rng) if rng.random() < 0.25 else rng.choice(TEXTS)


#: Where random text draws its characters: ASCII, control characters (not NUL: no argv can hold one), Latin,
#: CJK, emoji, the undecodable bytes of a non-UTF-8 command line (U+DC80-U+DCFF), line and paragraph separators,
#: the byte-order mark.
_RANGES = ((0x20, 0x7E), (0x01, 0x1F), (0xA0, 0x17F), (0x4E00, 0x4E50), (0x1F600, 0x1F640), (0xDC80, 0xDCFF),
           (0x2028, 0x2029), (0xFEFF, 0xFEFF))  # fmt: skip


def random_text(rng: random.Random, size: int = 40) -> str:
    """A string of up to ``size`` characters, mostly ASCII, from every range in :data:`_RANGES`."""
    weights = (20, 2, 3, 2, 1, 1, 1, 1)
    chars = []
    for _ in range(rng.randint(0, size)):
        lo, hi = rng.choices(_RANGES, weights)[0]
        chars.append(chr(rng.randint(lo, hi)))
    return "".join(chars)


def _valid(rng: random.Random, command: Command, param: Any) -> str:
    """A value ``param`` accepts: from :data:`VALID` / :data:`ARG_VALID`, else one of its type."""
    if param.param_type_name == "argument":
        pool = ARG_VALID.get(param.name)
    else:
        name = _long(param)
        pool = VALID.get(f"{command.name} {name}") or VALID.get(name) or PINNED.get(name)
    if pool:
        return rng.choice(pool)
    ann = _annotation(param)
    if isinstance(ann, type) and issubclass(ann, enum.Enum):
        return str(rng.choice(list(ann)).value)
    if ann is int:
        low = int(param.min) if getattr(param, "min", None) is not None else 1
        return str(rng.randint(low, low + 2))
    if ann is float:
        low = float(param.min) if getattr(param, "min", None) is not None else 0.0
        high = float(param.max) if getattr(param, "max", None) is not None else low + 1.0
        return repr(round(rng.uniform(low, high), 3))
    if ann is bool:
        return "true"
    if ann is Path:
        return "out" if _is_out(param) else "docs.jsonl"
    return "x"


def _knows_valid(command: Command, param: Any) -> bool:
    """Whether :func:`_valid` has more than a placeholder for ``param`` (a text option it has no value for)."""
    if param.param_type_name == "argument" or getattr(param, "is_flag", False):
        return True
    name = _long(param)
    ann = _annotation(param)
    known = f"{command.name} {name}" in VALID or name in VALID or name in PINNED
    return known or ann in (int, float, bool, Path) or (isinstance(ann, type) and issubclass(ann, enum.Enum))


def _is_out(param: Any) -> bool:
    return param.name in {"out", "plan_json"}


def _option_words(rng: random.Random, param: Any, value: Callable[[], str] | None = None) -> list[str]:
    name = _long(param)
    if name in NEVER:
        return []
    if getattr(param, "is_flag", False):
        if param.secondary_opts:
            if any(o in NEVER for o in param.opts):
                return [rng.choice(param.secondary_opts)]
            return [rng.choice([*param.opts, *param.secondary_opts])]
        return [rng.choice(param.opts)]
    count = rng.randint(1, 3) if param.multiple else 1
    words: list[str] = []
    for _ in range(count):
        text = value() if value is not None else _value(rng, param, is_out=_is_out(param))
        flag = rng.choice(param.opts)
        # "--opt=value" and "-o value" are the same to click; both forms are drawn.
        words += [f"{flag}={text}"] if flag.startswith("--") and rng.random() < 0.2 else [flag, text]
    return words


#: How a case is drawn: every value valid, every value valid but one, or anything goes.
MODES = ("valid", "one-bad", "chaos")


def draw_case(rng: random.Random, command: Command, *, huge_stdin: int = 100_000) -> Case:
    """A random command line for ``command``: each parameter present or not, valid or not, and a stdin.

    A third of the cases are valid throughout and a third have one bad value, so that commands are exercised
    past their parsing; the rest draw every value from the valid, boundary and malformed pools alike.
    """
    mode = rng.choices(MODES, (3, 3, 4))[0]
    chaos = mode == "chaos"
    options: list[list[str]] = []
    positionals: list[str] = []
    drawn: list[tuple[Any, int]] = []  # (param, index of its value in options or -1 - index in positionals)
    for param in command.params:
        if param.param_type_name == "argument":
            if param.required or rng.random() < (0.6 if chaos else 0.4):
                n = (rng.randint(0, 2) if chaos else 1) if param.nargs == -1 else 1
                for _ in range(n):
                    drawn.append((param, -1 - len(positionals)))
                    positionals.append(_value(rng, param, is_out=False) if chaos else _valid(rng, command, param))
            continue
        if _long(param) in NEVER and not getattr(param, "secondary_opts", ()):
            continue
        required = param.required and (not chaos or rng.random() < 0.95)
        optional = rng.random() < (0.35 if chaos else 0.25) and (chaos or _knows_valid(command, param))
        # An option whose default is a lot of work (100 questions, 10 trials a cell) is always given, small.
        if _long(param) in ALWAYS or _long(param) in WORK or required or optional:
            value = None if chaos else (lambda p=param: _valid(rng, command, p))
            options.append(_option_words(rng, param, value))
            if len(options[-1]) == 2:
                drawn.append((param, len(options) - 1))
    if mode == "one-bad" and drawn:
        param, at = rng.choice(drawn)
        bad = _value(rng, param, is_out=_is_out(param))
        if at >= 0:
            options[at][1] = bad
        else:
            positionals[-1 - at] = bad
    rng.shuffle(options)
    if not chaos:
        kind = rng.choice(["none", "docs", "text"])
        words = [w for group in options for w in group]
        dash = ["--"] if any(p.startswith("-") and p != "-" for p in positionals) else []
        return Case([*command.path, *words, *dash, *positionals], STDINS[kind], f"{mode}:{kind}")
    roll = rng.random()
    if roll < 0.04:
        options.append(["--no-such-option"])
    elif roll < 0.07 and options and len(options[-1]) == 2 and options[-1][0] not in _ALWAYS_FLAGS:
        options[-1].pop()  # an option left without its value, last on the line
    elif roll < 0.09:
        positionals.append("extra")
    words = [w for group in options for w in group]
    if any(p.startswith("-") for p in positionals):
        # click reads "-x" as an option: a positional that starts with "-" goes after "--".
        argv = [*command.path, *words, "--", *positionals]
    elif rng.random() < 0.5:
        argv = [*command.path, *words, *positionals]
    else:
        argv = [*command.path, *positionals, *words]
    kind = rng.choice([*STDINS, "huge"])
    return Case(argv, huge_bytes_of(huge_stdin) if kind == "huge" else STDINS[kind], kind)


def draw_cases(command: Command, n: int, seed: int | str, *, huge_stdin: int = 100_000) -> list[Case]:
    """``n`` cases for ``command``, the same for the same seed; a "huge" stdin is ``huge_stdin`` bytes."""
    rng = random.Random(f"{seed}:{command.name}")
    return [draw_case(rng, command, huge_stdin=huge_stdin) for _ in range(n)]


# -- running a case ------------------------------------------------------------------------------------------
class HarnessLeak(BaseException):
    """A case reached a real model backend or a non-loopback connection: a bug of this fuzzer, not of litm."""


class CaseTimeout(BaseException):
    """A case ran past its time limit."""


@dataclass
class Outcome:
    """What a case did, and which rules of the contract it broke (``problems``; empty when it passed)."""

    case: Case
    exit_code: int | None
    stdout: str
    stderr: str
    error: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def signature(self) -> str:
        """What identifies the failure: the problem kinds and the last line of the traceback or stderr."""
        # The command, the rules broken and, for a traceback, the exception's type: values would make each
        # generated case a failure of its own.
        words = [w for w in self.case.argv[:2] if re.fullmatch(r"[a-z][a-z-]*", w)]
        kinds = sorted({p.split(":")[0] for p in self.problems})
        raised = self.error.strip().splitlines()[-1].split(":")[0] if self.error else ""
        return f"{words} {kinds} {raised}"

    def report(self) -> str:
        argv = [a if len(a) < 80 else f"{a[:40]}...({len(a)} chars)" for a in self.case.argv]
        lines = [f"argv: {argv!r}", f"stdin: {self.case.stdin_kind}", f"exit: {self.exit_code}"]
        lines += [f"problem: {p}" for p in self.problems]
        lines += ["stderr:", self.stderr[-2000:]]
        if self.error:
            lines += ["traceback:", self.error[-4000:]]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {**self.case.to_json(), "exit": self.exit_code, "problems": self.problems, "stderr": self.stderr,
                "traceback": self.error}  # fmt: skip


def _fake_factory(spec: ModelSpec, **options: Any) -> DeadZoneModel:
    return DeadZoneModel(remote=spec.target == "remote", name=spec.target or "fake")


def _tripwire(spec: ModelSpec, **options: Any) -> Any:
    raise HarnessLeak(f"the fuzzer reached the real backend of {spec}")


_LOOPBACK = ("127.0.0.1", "::1", "localhost")
#: A line of :class:`litm.util._progress.LineProgress` (stderr is no terminal here).
_PROGRESS = re.compile(r"^[^:\n]+: \d+/\d+(?: \(\d+%\))?, elapsed \w+(?:, ETA \w+)?$")


@contextmanager
def sandbox() -> Iterator[None]:
    """The scripted backend registered, the real backends and outside connections tripwired, for the block."""
    real = [s for s in ("local", "openai", "openai-compatible", "anthropic") if s in backends()]
    from litm.models import _spec as spec_module

    saved = {s: spec_module._BACKENDS.get(s) for s in real}
    connect, bind = socket.socket.connect, socket.socket.bind

    def guarded(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if self.family != socket.AF_UNIX and host not in _LOOPBACK:
            raise HarnessLeak(f"the fuzzer reached the network: {address!r}")
        return connect(self, address)

    def no_bind(self: socket.socket, address: Any) -> Any:
        raise HarnessLeak(f"a command tried to listen on {address!r}: add it to EXCLUDED")

    register_backend(FAKE_SCHEME, _fake_factory, replace=True)
    for s in real:
        register_backend(s, _tripwire, replace=True)
    socket.socket.connect = guarded  # type: ignore[method-assign]
    socket.socket.bind = no_bind  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect = connect  # type: ignore[method-assign]
        socket.socket.bind = bind  # type: ignore[method-assign]
        for s, factory in saved.items():
            if factory is not None:
                register_backend(s, factory, replace=True)
        unregister_backend(FAKE_SCHEME)


def _snapshot(folder: Path) -> dict[str, str]:
    out = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


#: Files SQLite keeps beside a database, empty between transactions.
_SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def _companion_of(name: str, before: dict[str, str]) -> bool:
    """Whether ``name`` is SQLite's -wal/-shm file of a database that was there before the run."""
    return name.endswith(_SQLITE_COMPANIONS) and name.rsplit("-", 1)[0] in before


def _incomplete(path: Path, *, named: bool = False) -> str | None:
    """Why ``path`` looks like a partial file, or None (a ``named`` file's content is not judged by its name)."""
    if path.name.startswith(".") and path.name.endswith(".tmp"):
        return "an atomic writer's temporary file was left"
    data = path.read_bytes()
    if not data and not path.name.endswith(_SQLITE_COMPANIONS):
        return "an empty file was left"
    if named:
        return None
    if path.suffix == ".json":
        try:
            json.loads(data)
        except ValueError:
            return "a JSON file that does not parse"
    if path.suffix == ".jsonl" and not data.endswith(b"\n"):
        return "a JSON Lines file with a torn last line"
    return None


def _alarm(seconds: float) -> Callable[[], None]:
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        return lambda: None

    def expire(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"the case ran past {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)

    def cancel() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)

    return cancel


def run_case(case: Case, workspace: Path, *, timeout_s: float = 60.0) -> Outcome:
    """Run ``case`` through ``litm.cli.main`` with ``workspace`` as the working directory; check the contract.

    Call it inside :func:`sandbox`. The workspace is changed by the run (it is where outputs go).
    """
    before = _snapshot(workspace)
    runner = CliRunner()
    code: int | None = None
    error = ""
    old_argv, old_cwd = sys.argv, os.getcwd()
    home = workspace / ".home"
    env = {"COLUMNS": "100", "NO_COLOR": "1", "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
           "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"), "LITM_CACHE_DIR": None,
           "LITM_SERVE_CONFIG": None}  # fmt: skip
    with runner.isolation(input=case.stdin, env=env) as (out, err, _):
        sys.argv = ["litm", *case.argv]
        os.chdir(workspace)
        cancel = _alarm(timeout_s)
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except HarnessLeak:
            raise
        except BaseException:  # anything else escaping main() is what a user sees as a traceback
            error = traceback.format_exc()
        finally:
            cancel()
            os.chdir(old_cwd)
            sys.argv = old_argv
        sys.stdout.flush()
        sys.stderr.flush()
        stdout = out.getvalue().decode("utf-8", "replace")
        stderr = err.getvalue().decode("utf-8", "replace")
    outcome = Outcome(case, code, stdout, stderr, error)
    _check(outcome, workspace, before)
    return outcome


def _output_dirs(argv: Sequence[str], workspace: Path) -> list[str]:
    """Where a command line lets a run write: the folders it names (``--out``, a results folder to report
    on, the working directory as ``.``) and litm's default ``litm-out``; "" stands for everywhere."""
    found = ["litm-out", ".home"]
    for i, word in enumerate(argv):
        if word in ("--out", "-o") and i + 1 < len(argv):
            found.append(argv[i + 1])
        elif word.startswith("--out="):
            found.append(word.removeprefix("--out="))
        elif not Path(word).is_absolute() and _is_dir(workspace / word):
            found.append("" if Path(word) == Path(".") else word)
    return [f for f in found if not Path(f).is_absolute()]


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def _check(outcome: Outcome, workspace: Path, before: dict[str, str]) -> None:
    problems = outcome.problems
    if outcome.error:
        last = outcome.error.strip().splitlines()[-1]
        problems.append(f"traceback: {last[:300]}")
    elif outcome.exit_code not in (0, 2):
        problems.append(f"exit: status {outcome.exit_code}")
    if outcome.exit_code == 2:
        # Progress lines of a run that got under way before it failed may come first; the error is one line.
        lines = [x for x in outcome.stderr.strip("\n").split("\n") if not _PROGRESS.match(x)]
        if len(lines) != 1 or not lines[0].startswith("litm: error: "):
            problems.append(f"stderr: {len(lines)} lines on failure, expected one 'litm: error:' line")
    after = _snapshot(workspace)
    # A run that fails part way may leave what it finished in its output folder (a resumable log, say), but a
    # failed run creates nothing anywhere else: not a ledger, not a key store, not a file named by mistake.
    given = {w.split("=", 1)[-1] for w in outcome.case.argv}
    named = _output_dirs(outcome.case.argv, workspace)
    outputs = ("",) if "" in named else tuple(f"{Path(p).as_posix().rstrip('/')}/" for p in named)
    for name in sorted(after):
        if name in before and before[name] == after[name]:
            continue
        # A file the command line names is whatever the user asked for there (report.html as --out x.json).
        why = _incomplete(workspace / name, named=name in given)
        if why:
            problems.append(f"partial file: {name}: {why}")
        elif name in before and outcome.exit_code != 0:
            problems.append(f"partial file: {name}: changed by a failed run")
        elif outcome.exit_code != 0 and not name.startswith(outputs) and not _companion_of(name, before):
            problems.append(f"state: a failed run created {name}")


def prepare(folder: Path, *, huge_bytes: int = 200_000) -> Path:
    """A fresh workspace in ``folder`` (removed first when it exists)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return build_workspace(folder, huge_bytes=huge_bytes)


def describe(outcomes: Sequence[Outcome]) -> str:
    """One report of the failed outcomes, one block each, distinct failures first."""
    bad = [o for o in outcomes if not o.ok]
    seen: dict[str, Outcome] = {}
    for o in bad:
        seen.setdefault(o.signature(), o)
    return f"{len(bad)} of {len(outcomes)} cases broke the contract ({len(seen)} distinct):\n\n" + "\n\n".join(
        o.report() for o in seen.values()
    )
