"""The ``local`` backend: GGUF models run in-process by llama.cpp (``llama-cpp-python``).

Choices, each measured on a 2-core CPU (see ``benchmarks/bench_models.py``):

* **One** ``Llama`` **object per model file, kept alive.** Loading takes about 0.5 s and reserves a
  logits buffer (512 MiB for Gemma's 262k vocabulary), so every :class:`LocalModel` for the same file
  shares one loaded model. The context is sized to the request (a power of two, at least 2048 tokens, at
  most the model's training context) and grows by reloading only when a request needs more.
* **Prefix reuse without changing answers** (``reuse_prefix=True``, the default). llama.cpp can keep the
  KV cache of the previous prompt and evaluate only what follows the longest shared token prefix
  (``reuse_prefix="full"``): a second question on the same 3,000-token context is then 20-35x faster,
  but the short re-evaluated tail runs in a batch of a different shape than in a cold run, so its logits
  drift (by up to about 1 on Gemma 3 270M) and greedy answers can change with what ran before (2 of 10
  NQ questions did in ``benchmarks/bench_models.py``). The default reuses only whole ``n_batch``-token
  chunks (512) that a cold run would have evaluated in exactly the same batches, and re-evaluates the
  rest: the logits are bit-identical to a cold run (measured max difference 0.0), answers never depend on
  order, and a long shared context is still mostly reused. ``reuse_prefix=False`` clears the cache before
  every prompt. :attr:`Completion.cached_tokens` reports how many prompt tokens were reused.
* **Greedy and deterministic**: ``temperature=0`` selects llama.cpp's greedy sampler; flash attention on.
* **Chat only through the model's own template.** Messages are rendered with the GGUF's
  ``tokenizer.chat_template``; a model without one (the Gemma 3 270M base model) refuses messages with a
  :class:`~litm.errors.PromptError` instead of guessing a chat format. Pass a plain completion prompt.

>>> from litm.models import load_model
>>> model = load_model("local:smollm2")                                             # doctest: +SKIP
>>> model.complete([{"role": "user", "content": "Capital of France?"}], max_tokens=8).text  # doctest: +SKIP
'The capital of France is Paris.'
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from litm.errors import (
    ContextWindowExceededError,
    MissingDependencyError,
    ModelError,
    ModelNotFoundError,
    PromptError,
)
from litm.models.base import Completion, Model, PromptInput, check_max_tokens, check_prompt
from litm.prompt.messages import Message, check_messages

MIN_N_CTX = 2048
#: How much of the previous prompt's KV cache a local model may reuse (see the module docstring).
ReuseMode = Literal["aligned", "full", "cold"]
_REUSE_MODES: dict[object, ReuseMode] = {
    True: "aligned",
    "aligned": "aligned",
    "full": "full",
    False: "cold",
    "cold": "cold",
}
_INSTALL = "pip install 'litm[local]'"


def _llama_class() -> Any:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise MissingDependencyError(f"local models need llama-cpp-python: {_INSTALL}") from exc
    return Llama


def default_threads() -> int:
    """CPU cores this process may use (affinity-aware, so containers get their real share)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not available on macOS / Windows
        return max(1, os.cpu_count() or 1)


def _ctx_size(needed: int, cap: int) -> int:
    size = max(MIN_N_CTX, 1 << max(needed - 1, 1).bit_length())
    return min(size, cap) if cap > 0 else size


class _Slot:
    """One loaded ``Llama`` per (file, threads, flash attention, batch), shared by every LocalModel.

    ``exact`` counts the leading KV-cache positions that hold exactly what a cold run computes for them:
    positions evaluated as whole, ``n_batch``-aligned chunks of a prompt (not generated tokens, not a
    tail evaluated after a misaligned reuse). Aligned reuse never keeps more than that.
    """

    def __init__(self, path: Path, n_threads: int, flash_attn: bool, n_batch: int) -> None:
        self.path = path
        self.n_threads = n_threads
        self.flash_attn = flash_attn
        self.n_batch = n_batch
        self.lock = threading.RLock()
        self.llm: Any = None
        self.n_ctx = 0
        self.n_ctx_train = 0
        self.exact = 0

    def get(self, needed: int = 0) -> Any:
        """The loaded model with room for ``needed`` tokens (caller holds ``lock``)."""
        # Requests are checked against the context window first, so the training context is enough.
        if self.llm is not None and self.n_ctx >= min(needed, self.n_ctx_train or needed):
            return self.llm
        n_ctx = _ctx_size(needed, self.n_ctx_train)
        self.unload()
        llama = _llama_class()
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
        self.exact = 0
        arch = self.llm.metadata.get("general.architecture", "")
        self.n_ctx_train = int(self.llm.metadata.get(f"{arch}.context_length", 0) or 0)
        return self.llm

    def unload(self) -> None:
        if self.llm is not None:
            self.llm.close()
            self.llm = None
            self.n_ctx = 0
            self.exact = 0

    def prepare(self, tokens: list[int], mode: ReuseMode) -> int:
        """Set the KV cache up for ``tokens`` under ``mode``; return how many prompt tokens it reuses.

        Caller holds ``lock`` and has called :meth:`get`. llama-cpp-python reuses the longest prefix of
        ``llm.input_ids[:llm.n_tokens]`` that matches, so truncating ``n_tokens`` bounds what it reuses.
        """
        llm = self.llm
        step = int(llm.n_batch)
        shared = 0
        if llm.n_tokens > 0:
            shared = int(llm.longest_token_prefix(llm.input_ids[: llm.n_tokens].tolist(), tokens))
            shared = min(shared, len(tokens) - 1)  # the last prompt token is always evaluated for fresh logits
        if mode == "full" and shared > 0:
            keep = shared
            # Positions from the last whole chunk below `keep` on are now computed off the cold grid.
            self.exact = min(self.exact, keep // step * step)
        else:
            keep = min(shared // step * step, self.exact) if mode == "aligned" else 0
            # Evaluation restarts at a chunk boundary, so the prompt's whole chunks match a cold run.
            self.exact = len(tokens) // step * step
        if keep == 0:
            llm.reset()  # n_tokens = 0: the next evaluation clears the KV cache and starts cold
        else:
            llm.n_tokens = keep
        return keep


_POOL: dict[tuple[str, int, bool, int], _Slot] = {}
_POOL_LOCK = threading.Lock()


def _slot(path: Path, n_threads: int, flash_attn: bool, n_batch: int) -> _Slot:
    key = (str(path), n_threads, flash_attn, n_batch)
    with _POOL_LOCK:
        if key not in _POOL:
            _POOL[key] = _Slot(path, n_threads, flash_attn, n_batch)
        return _POOL[key]


def unload_all() -> None:
    """Free every loaded local model (they reload on next use)."""
    with _POOL_LOCK:
        slots = list(_POOL.values())
    for slot in slots:
        with slot.lock:
            slot.unload()


# Free models before the interpreter tears modules down: llama-cpp-python's finalisers otherwise run after
# its C bindings are gone and print "TypeError: 'NoneType' object is not callable" at exit.
atexit.register(unload_all)


class LlamaTokenizer:
    """llama.cpp's own tokenizer for a :class:`LocalModel`: counts are exact.

    ``count(text)`` is what llama.cpp evaluates for a completion prompt (BOS included when the model adds
    one; special-token text such as ``<start_of_turn>`` parsed as special, as llama.cpp does);
    ``count_messages`` renders the GGUF's chat template with the reply header first.
    """

    def __init__(self, model: LocalModel) -> None:
        self._model = model

    @property
    def name(self) -> str:
        return f"llama.cpp:{self._model.name}"

    @property
    def exact(self) -> bool:
        return True

    def encode(self, text: str) -> list[int]:
        return self._model._tokenize(text, add_bos=True)

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def render_messages(self, messages: Sequence[Message]) -> str:
        """The prompt text the model's chat template makes of ``messages`` (reply header included)."""
        return self._model.render_messages(messages)

    def encode_messages(self, messages: Sequence[Message]) -> list[int]:
        # As llama.cpp's chat handler does: the template writes any BOS itself, so none is added.
        return self._model._tokenize(self.render_messages(messages), add_bos=False)

    def count_messages(self, messages: Sequence[Message]) -> int:
        return len(self.encode_messages(messages))

    def __repr__(self) -> str:
        return f"LlamaTokenizer({self._model.name!r})"


class LocalModel(Model):
    """A GGUF file run by llama.cpp in this process (see the module docstring for the choices made).

    ``n_ctx`` fixes the context window (default: the model's training context, allocated as needed);
    ``n_threads`` defaults to the usable cores. ``reuse_prefix``: ``True`` (or ``"aligned"``, the default)
    reuses only what leaves every answer identical to a cold run; ``"full"`` reuses the longest shared
    prefix (fastest; answers may depend on the previous prompt); ``False`` (or ``"cold"``) reuses nothing.
    Raises :class:`~litm.errors.ModelNotFoundError` when the file does not exist.

    >>> model = LocalModel("/models/qwen2.5-0.5b-instruct-q4_k_m.gguf", reuse_prefix=False)  # doctest: +SKIP
    """

    def __init__(
        self,
        path: str | Path,
        *,
        spec: str | None = None,
        name: str | None = None,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        n_batch: int = 512,
        flash_attn: bool = True,
        reuse_prefix: bool | ReuseMode = True,
    ) -> None:
        file = Path(path).expanduser()
        if not file.is_file():
            raise ModelNotFoundError(f"model file not found: {file}")
        if n_ctx is not None and n_ctx < 16:
            raise ValueError(f"n_ctx must be >= 16, got {n_ctx}")
        if reuse_prefix not in _REUSE_MODES:
            raise ValueError(f"reuse_prefix must be True, False, 'aligned', 'full' or 'cold', got {reuse_prefix!r}")
        _llama_class()  # fail now, with the install command, rather than at the first prompt
        self.path = file.resolve()
        self.name = name or self.path.stem
        self.spec = spec or f"local:{self.path}"
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.reuse_prefix: ReuseMode = _REUSE_MODES[reuse_prefix]
        self._slot = _slot(self.path, self.n_threads, flash_attn, n_batch)
        self._tokenizer = LlamaTokenizer(self)
        self._formatter: Any = None

    # -- model facts -------------------------------------------------------------------------------
    def _loaded(self, needed: int = 0) -> Any:
        with self._slot.lock:
            return self._slot.get(max(needed, self.n_ctx or 0))

    @property
    def metadata(self) -> dict[str, str]:
        """The GGUF metadata (architecture, context length, chat template, ...)."""
        return dict(self._loaded().metadata)

    @property
    def chat_template(self) -> str | None:
        """The GGUF's own Jinja chat template, or None for a base model without one."""
        template = self._loaded().metadata.get("tokenizer.chat_template")
        return str(template) if template else None

    @property
    def supports_chat(self) -> bool:
        return self.chat_template is not None

    @property
    def context_window(self) -> int:
        self._loaded()
        train = self._slot.n_ctx_train or self._slot.n_ctx
        return min(self.n_ctx, train) if self.n_ctx else train

    @property
    def tokenizer(self) -> LlamaTokenizer:
        return self._tokenizer

    def _tokenize(self, text: str, *, add_bos: bool) -> list[int]:
        with self._slot.lock:
            llm = self._slot.get(self.n_ctx or 0)
            return list(llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True))

    def _special_text(self, token: int) -> str:
        if token < 0:
            return ""
        with self._slot.lock:
            return bytes(self._slot.get().detokenize([token], special=True)).decode("utf-8", "replace")

    def render_messages(self, messages: Sequence[Message]) -> str:
        """Render chat ``messages`` with the GGUF's template (:class:`~litm.errors.PromptError` if none)."""
        checked = check_messages(messages)
        template = self.chat_template
        if template is None:
            raise PromptError(
                f"{self.name} has no chat template (a base model): pass a plain completion prompt "
                f"such as 'Context ...\\nQuestion: ...\\nAnswer:' instead of chat messages"
            )
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            llm = self._loaded()
            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=self._special_text(llm.token_eos()),
                bos_token=self._special_text(llm.token_bos()),
                add_generation_prompt=True,
            )
        try:
            return str(self._formatter(messages=checked).prompt)
        except Exception as exc:  # jinja2 errors and the template's own raise_exception()
            raise PromptError(f"the chat template of {self.name} rejected the messages: {exc}") from exc

    # -- generation --------------------------------------------------------------------------------
    def complete(
        self,
        prompt: PromptInput,
        *,
        max_tokens: int = 64,
        stop: Sequence[str] | None = None,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Completion:
        """Generate up to ``max_tokens`` tokens; greedy when ``temperature`` is 0 (the default).

        Raises :class:`~litm.errors.ContextWindowExceededError` before evaluating anything when the
        prompt plus ``max_tokens`` does not fit the context window.
        """
        check_max_tokens(max_tokens)
        checked = check_prompt(prompt)
        stops = [s for s in (stop or []) if s]
        if isinstance(checked, str):
            tokens = self._tokenizer.encode(checked)
        else:
            tokens = self._tokenizer.encode_messages(checked)
            eos = self._special_text(self._loaded().token_eos())
            if eos:
                stops.append(eos)
        if not tokens:
            raise PromptError("empty prompt: nothing to evaluate")
        window = self.context_window
        if len(tokens) + max_tokens > window:
            raise ContextWindowExceededError(
                f"prompt of {len(tokens)} tokens plus max_tokens={max_tokens} exceeds the "
                f"{window}-token context window of {self.name}"
            )
        with self._slot.lock:
            llm = self._slot.get(max(len(tokens) + max_tokens, self.n_ctx or 0))
            reused = self._slot.prepare(tokens, self.reuse_prefix)
            start = time.perf_counter()
            try:
                out = llm.create_completion(
                    tokens,
                    max_tokens=max_tokens,
                    stop=stops or None,
                    temperature=temperature,
                    top_k=1 if temperature == 0 else 40,
                    repeat_penalty=1.0,
                    seed=seed,
                )
            except (ValueError, RuntimeError) as exc:
                self._slot.exact = 0
                raise ModelError(f"llama.cpp failed on {self.name}: {exc}") from exc
            latency = time.perf_counter() - start
        choice = out["choices"][0]
        usage = out["usage"]
        return Completion(
            text=str(choice["text"]),
            input_tokens=int(usage["prompt_tokens"]),
            output_tokens=int(usage["completion_tokens"]),
            latency_s=latency,
            finish_reason=str(choice.get("finish_reason") or "stop"),
            model=self.name,
            cached_tokens=reused,
        )

    def close(self) -> None:
        """Unload the shared llama.cpp model (every LocalModel of this file reloads it on next use)."""
        with self._slot.lock:
            self._slot.unload()
        self._formatter = None

    def __repr__(self) -> str:
        return f"LocalModel({str(self.path)!r}, reuse_prefix={self.reuse_prefix})"
