"""The process-wide pool of loaded llama.cpp models: one ``Llama`` per model file and settings, shared.

Loading takes about 0.5 s and reserves a logits buffer (512 MiB for Gemma's 262k vocabulary), so every
:class:`~litm.models._local.LocalModel` for the same file shares one loaded model. The context is sized to the
request (a power of two, at least 2048 tokens, at most the model's training context) and grows by reloading
only when a request needs more.

>>> context_size(3000, 32768), context_size(10, 0)
(4096, 2048)
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from litm.errors import MissingDependencyError, ModelError
from litm.models._local.kv_reuse import KvReuse

if TYPE_CHECKING:  # llama-cpp-python is the optional ``local`` extra, imported when a model loads
    from llama_cpp import Llama

__all__ = ["MIN_N_CTX", "SharedLlama", "context_size", "default_threads", "llama_class", "shared", "unload_all"]

MIN_N_CTX = 2048
INSTALL = "pip install 'litm[local]'"


def llama_class() -> type[Llama]:
    """``llama_cpp.Llama``, or :class:`~litm.errors.MissingDependencyError` naming the extra."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise MissingDependencyError(f"local models need llama-cpp-python: {INSTALL}") from exc
    return Llama


def default_threads() -> int:
    """CPU cores this process may use (affinity-aware, so containers get their real share)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not available on macOS / Windows
        return max(1, os.cpu_count() or 1)


def context_size(needed: int, cap: int) -> int:
    """The context to allocate for ``needed`` tokens: a power of two >= 2048, at most ``cap`` (if set)."""
    size = max(MIN_N_CTX, 1 << max(needed - 1, 1).bit_length())
    return min(size, cap) if cap > 0 else size


class SharedLlama:
    """One loaded ``Llama`` per (file, threads, flash attention, batch), shared by every LocalModel.

    Hold :attr:`lock` around every use of :attr:`llm`; :attr:`kv` tracks what of its KV cache can be
    reused without changing answers.
    """

    def __init__(self, path: Path, n_threads: int, flash_attn: bool, n_batch: int) -> None:
        self.path = path
        self.n_threads = n_threads
        self.flash_attn = flash_attn
        self.n_batch = n_batch
        self.lock = threading.RLock()
        self.llm: Llama | None = None
        self.n_ctx = 0
        self.n_ctx_train = 0
        self.kv = KvReuse()

    def get(self, needed: int = 0) -> Llama:
        """The loaded model with room for ``needed`` tokens (caller holds ``lock``)."""
        # Requests are checked against the context window first, so the training context is enough.
        if self.llm is not None and self.n_ctx >= min(needed, self.n_ctx_train or needed):
            return self.llm
        n_ctx = context_size(needed, self.n_ctx_train)
        self.unload()
        llama = llama_class()
        # llama-cpp-python prints some llama.cpp warnings even with verbose=False (from Python, through
        # sys.stderr): keep them out of the user's output, and quote them if the load fails.
        log = io.StringIO()
        try:
            with contextlib.redirect_stderr(log):
                self.llm = llama(
                    model_path=str(self.path),
                    n_ctx=n_ctx,
                    n_batch=self.n_batch,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    flash_attn=self.flash_attn,
                    seed=0,
                    verbose=False,
                )
        except (ValueError, RuntimeError) as exc:
            detail = " ".join(log.getvalue().split()[-40:])
            suffix = f" ({detail})" if detail else ""
            raise ModelError(f"llama.cpp could not load {self.path}: {exc}{suffix}") from exc
        self.n_ctx = n_ctx
        self.kv.reset()
        arch = self.llm.metadata.get("general.architecture", "")
        self.n_ctx_train = int(self.llm.metadata.get(f"{arch}.context_length", 0) or 0)
        return self.llm

    def unload(self) -> None:
        if self.llm is not None:
            self.llm.close()
            self.llm = None
            self.n_ctx = 0
            self.kv.reset()


_POOL: dict[tuple[str, int, bool, int], SharedLlama] = {}
_POOL_LOCK = threading.Lock()


def shared(path: Path, n_threads: int, flash_attn: bool, n_batch: int) -> SharedLlama:
    """The pool's entry for this file and these settings (created unloaded on first request)."""
    key = (str(path), n_threads, flash_attn, n_batch)
    with _POOL_LOCK:
        if key not in _POOL:
            _POOL[key] = SharedLlama(path, n_threads, flash_attn, n_batch)
        return _POOL[key]


def unload_all() -> None:
    """Free every loaded local model (they reload on next use)."""
    with _POOL_LOCK:
        entries = list(_POOL.values())
    for entry in entries:
        with entry.lock:
            entry.unload()


# Free models before the interpreter tears modules down: llama-cpp-python's finalisers otherwise run after
# its C bindings are gone and print "TypeError: 'NoneType' object is not callable" at exit.
atexit.register(unload_all)
