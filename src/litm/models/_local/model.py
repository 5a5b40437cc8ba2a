"""The ``local`` backend's model: a GGUF file run by llama.cpp in this process (``llama-cpp-python``).

Choices, each measured on a 2-core CPU (see ``benchmarks/bench_models.py``):

* **One loaded model per file, kept alive** (:mod:`litm.models._local.pool`).
* **Prefix reuse without changing answers** (``reuse_prefix=True``, the default; see
  :mod:`litm.models._local.kv_reuse`). :attr:`Completion.cached_tokens` reports how many prompt tokens were
  reused.
* **Greedy and deterministic**: ``temperature=0`` selects llama.cpp's greedy sampler; flash attention on.
* **Chat only through the model's own template**, rendered by :class:`~litm.prompt.ChatTemplate` (the
  package's one Jinja renderer) with the GGUF's BOS and EOS. A model without a template (the Gemma 3 270M
  base model) refuses messages with a :class:`~litm.errors.PromptError` instead of guessing a chat format;
  a built :class:`litm.Prompt` is sent to it as its plain text.

>>> from litm.models import load_model
>>> model = load_model("local:smollm2")                                             # doctest: +SKIP
>>> model.complete([{"role": "user", "content": "Capital of France?"}], max_tokens=8).text  # doctest: +SKIP
'The capital of France is Paris.'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from litm.errors import (
    ContextWindowExceededError,
    InvalidOptionError,
    InvalidOptionTypeError,
    ModelError,
    ModelNotFoundError,
    PromptError,
)
from litm.models._base import Completion, GenerationRequest, Model, NativePrompt, PromptLike
from litm.models._local.kv_reuse import ReuseMode, reuse_mode
from litm.models._local.logprobs import next_token_top, teacher_forced
from litm.models._local.pool import default_threads, llama_class, shared
from litm.models._local.tokenizer import LlamaTokenizer
from litm.models._logprobs import Logprobs
from litm.prompt import ChatTemplate, Prompt
from litm.prompt._messages import Message, check_messages

if TYPE_CHECKING:  # llama-cpp-python is the optional ``local`` extra, imported when a model loads
    from llama_cpp import Llama

__all__ = ["LocalModel"]

_T = TypeVar("_T")


class LocalModel(Model):
    """A GGUF file run by llama.cpp in this process (see the module docstring for the choices made).

    ``n_ctx`` fixes the context window (default: the model's training context, allocated as needed);
    ``n_threads`` defaults to the usable cores; ``n_batch`` is llama.cpp's (the unit aligned reuse keeps, and
    part of what a cold run computes: values can differ in the last digits between batch sizes).
    ``reuse_prefix``: ``True`` (or ``"aligned"``, the default) reuses only what leaves every answer identical
    to a cold run; ``"full"`` reuses the longest shared
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
        if n_ctx is not None and (isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 16):
            raise InvalidOptionError(f"n_ctx must be an integer >= 16, got {n_ctx!r}")
        if isinstance(n_batch, bool) or not isinstance(n_batch, int) or n_batch < 1:
            raise InvalidOptionError(f"n_batch must be an integer >= 1, got {n_batch!r}")
        mode = reuse_mode(reuse_prefix)
        llama_class()  # fail now, with the install command, rather than at the first prompt
        self.path = file.resolve()
        self.name = name or self.path.stem
        self.spec = spec or f"local:{self.path}"
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.n_batch = n_batch
        self.reuse_prefix: ReuseMode = mode
        self._shared = shared(self.path, self.n_threads, flash_attn, n_batch)
        self._tokenizer = LlamaTokenizer(self)
        self._template: ChatTemplate | None = None
        self._template_read = False

    # -- model facts -------------------------------------------------------------------------------
    def _loaded(self, needed: int = 0) -> Llama:
        with self._shared.lock:
            return self._shared.get(max(needed, self.n_ctx or 0))

    @property
    def metadata(self) -> dict[str, str]:
        """The GGUF metadata (architecture, context length, chat template, ...)."""
        return dict(self._loaded().metadata)

    @property
    def template(self) -> ChatTemplate | None:
        """The GGUF's chat template with its BOS/EOS and special tokens, or None for a base model."""
        if not self._template_read:
            with self._shared.lock:
                self._template = ChatTemplate.from_llama(self._loaded(), name=self.path.name)
                self._template_read = True
        return self._template

    @property
    def chat_template(self) -> str | None:
        """The GGUF's own Jinja chat template source, or None for a base model without one."""
        return self.template.source if self.template is not None else None

    @property
    def supports_chat(self) -> bool:
        return self.template is not None

    @property
    def context_window(self) -> int:
        self._loaded()
        train = self._shared.n_ctx_train or self._shared.n_ctx
        return min(self.n_ctx, train) if self.n_ctx else train

    @property
    def tokenizer(self) -> LlamaTokenizer:
        return self._tokenizer

    def tokenize(self, text: str, *, add_bos: bool, special: bool = True) -> list[int]:
        """llama.cpp's token ids for ``text`` (special-token text parsed as special unless ``special=False``)."""
        with self._shared.lock:
            llm = self._shared.get(self.n_ctx or 0)
            return list(llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=special))

    def render_messages(self, messages: Sequence[Message]) -> str:
        """Render chat ``messages`` with the GGUF's template (:class:`~litm.errors.PromptError` if none)."""
        checked = check_messages(messages)
        template = self.template
        if template is None:
            raise PromptError(
                f"{self.name} has no chat template (a base model): pass a plain completion prompt "
                f"such as 'Context ...\\nQuestion: ...\\nAnswer:' instead of chat messages"
            )
        try:
            return template.render(checked, add_generation_prompt=True)
        except PromptError as exc:  # jinja2 errors and the template's own raise_exception()
            raise PromptError(f"the chat template of {self.name} rejected the messages: {exc}") from exc

    def _render_prompt(self, prompt: Prompt) -> NativePrompt:
        template = self.template
        if template is None:
            return prompt.text
        # Bound to this template, the prompt also escapes the tokens this tokenizer treats as special.
        rendered = prompt.with_chat_template(template).messages("openai")
        if not isinstance(rendered, list):
            raise PromptError(f"a prompt's chat messages must be a list, got {type(rendered).__name__}")
        return check_messages(rendered)

    # -- generation --------------------------------------------------------------------------------
    def _generate(self, request: GenerationRequest) -> Completion:
        """Generate up to ``max_tokens`` tokens; greedy when ``temperature`` is 0 (the default).

        Raises :class:`~litm.errors.ContextWindowExceededError` before evaluating anything when the
        prompt plus ``max_tokens`` does not fit the context window.
        """
        stops = list(request.stop)
        if isinstance(request.prompt, str):
            tokens = self._tokenizer.encode(request.prompt)
        else:
            tokens = self._tokenizer.encode_messages(request.prompt)
            eos = self.template.eos_token if self.template is not None else ""
            if eos:
                stops.append(eos)
        if not tokens:
            raise PromptError("empty prompt: nothing to evaluate")
        window = self.context_window
        if len(tokens) + request.max_tokens > window:
            raise ContextWindowExceededError(
                f"prompt of {len(tokens)} tokens plus max_tokens={request.max_tokens} exceeds the "
                f"{window}-token context window of {self.name}"
            )
        with self._shared.lock:
            llm = self._shared.get(max(len(tokens) + request.max_tokens, self.n_ctx or 0))
            reused = self._shared.kv.prepare(llm, tokens, self.reuse_prefix)
            start = time.perf_counter()
            try:
                out = llm.create_completion(
                    tokens,
                    max_tokens=request.max_tokens,
                    stop=stops or None,
                    temperature=request.temperature,
                    top_k=1 if request.greedy else 40,
                    repeat_penalty=1.0,
                    seed=request.seed,
                )
            except (ValueError, RuntimeError) as exc:
                self._shared.kv.reset()
                raise ModelError(f"llama.cpp failed on {self.name}: {exc}") from exc
            latency = time.perf_counter() - start
        if isinstance(out, Iterator):  # only a stream=True call streams; never asked for here
            raise ModelError(f"llama.cpp streamed an answer that was not asked to stream ({self.name})")
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
            sampled=not request.greedy,
        )

    # -- likelihood ----------------------------------------------------------------------------------
    def _prompt_tokens(self, prompt: PromptLike, extra: int) -> list[int]:
        """``prompt`` tokenized exactly as :meth:`complete` sends it, checked to fit with ``extra`` more tokens."""
        native = self.render(prompt)
        tokens = self._tokenizer.encode(native) if isinstance(native, str) else self._tokenizer.encode_messages(native)
        if not tokens:
            raise PromptError("empty prompt: nothing to evaluate")
        if len(tokens) + extra > self.context_window:
            raise ContextWindowExceededError(
                f"prompt of {len(tokens)} tokens plus a {extra}-token continuation exceeds the "
                f"{self.context_window}-token context window of {self.name}"
            )
        return tokens

    def _after_prompt(self, tokens: list[int], extra: int, score: Callable[[Llama], _T]) -> _T:
        """Run ``score(llm)`` with ``tokens`` in the KV cache, evaluated as a cold run would (caller: no lock)."""
        with self._shared.lock:
            llm = self._shared.get(max(len(tokens) + extra, self.n_ctx or 0))
            kv = self._shared.kv
            try:
                if not kv.holds_prompt(llm, tokens):
                    reused = kv.prepare(llm, tokens, "aligned" if self.reuse_prefix == "full" else self.reuse_prefix)
                    llm.eval(tokens[reused:])
                return score(llm)
            except (ValueError, RuntimeError) as exc:
                kv.reset()
                llm.reset()  # type: ignore[no-untyped-call]  # llama-cpp-python leaves it unannotated
                raise ModelError(f"llama.cpp failed scoring after a prompt on {self.name}: {exc}") from exc

    def continuation_logprobs(self, prompt: PromptLike, continuations: Sequence[str]) -> list[Logprobs]:
        """Teacher-forced log-probabilities of each continuation after ``prompt`` (one forward pass each).

        The prompt is tokenized exactly as :meth:`complete` sends it (a chat prompt through the template,
        reply header included); each continuation is tokenized on its own, without BOS and with special-token
        text read as plain text, and appended (a completion prompt ending in ``"Answer:"`` wants a leading
        space on the continuation). Right after :meth:`complete` on the same prompt the prompt is not
        evaluated again; otherwise it is, on the chunk grid of a cold run (``aligned`` and ``cold`` reuse),
        so the values do not depend on what ran before.

        >>> model = load_model("local")                                                  # doctest: +SKIP
        >>> [round(lp.mean, 2) for lp in model.continuation_logprobs("2+2=", ["4", "5"])]  # doctest: +SKIP
        [-1.05, -3.62]
        """
        if isinstance(continuations, str):
            raise InvalidOptionTypeError("continuations is a list of strings, not one string")
        conts = [self.tokenize(c, add_bos=False, special=False) if isinstance(c, str) else [] for c in continuations]
        for text, ids in zip(continuations, conts, strict=True):
            if not ids:
                raise InvalidOptionError(f"a continuation must be a non-empty string, got {text!r}")
        longest = max((len(c) for c in conts if c), default=0)
        tokens = self._prompt_tokens(prompt, longest)
        began = time.perf_counter()  # the first continuation's latency includes evaluating the prompt

        def score(llm: Llama) -> list[Logprobs]:
            out: list[Logprobs] = []
            start = began
            for text, ids in zip(continuations, conts, strict=True):
                values = teacher_forced(llm, tokens, ids)
                self._shared.kv.rewound(len(tokens) - 1, int(llm.n_batch))
                pieces = tuple(llm.detokenize([t]).decode("utf-8", errors="replace") for t in ids)
                out.append(Logprobs(text, pieces, tuple(values), len(tokens), time.perf_counter() - start))
                start = time.perf_counter()
            return out

        return self._after_prompt(tokens, longest, score)

    def next_token_logprobs(self, prompt: PromptLike, top: int = 5) -> list[Logprobs]:
        """The ``top`` likeliest next tokens after ``prompt``, likeliest first, each as a one-token
        :class:`~litm.models._logprobs.Logprobs`: how confident the model's first answer token is.

        The gap between the first two is the greedy answer's *margin*: a small one (a few tenths of a nat) can
        flip with llama.cpp's CPU kernels, thread count or batch size. The prompt is evaluated as in
        :meth:`continuation_logprobs`.

        >>> model = load_model("local")                                                    # doctest: +SKIP
        >>> first, second = model.next_token_logprobs("Capital of France? Answer:", top=2)    # doctest: +SKIP
        >>> first.total >= second.total  # first.total - second.total: the margin, in nats  # doctest: +SKIP
        True
        """
        if isinstance(top, bool) or not isinstance(top, int) or top < 1:
            raise InvalidOptionError(f"top must be a positive integer, got {top!r}")
        tokens = self._prompt_tokens(prompt, 1)
        began = time.perf_counter()

        def score(llm: Llama) -> list[Logprobs]:
            best = next_token_top(llm, tokens, top)
            self._shared.kv.rewound(len(tokens) - 1, int(llm.n_batch))
            spent = time.perf_counter() - began
            pieces = [llm.detokenize([token]).decode("utf-8", errors="replace") for token, _ in best]
            return [
                Logprobs(piece, (piece,), (value,), len(tokens), spent)
                for piece, (_, value) in zip(pieces, best, strict=True)
            ]

        return self._after_prompt(tokens, 1, score)

    def close(self) -> None:
        """Unload the shared llama.cpp model (every LocalModel of this file reloads it on next use)."""
        with self._shared.lock:
            self._shared.unload()

    def __repr__(self) -> str:
        return f"LocalModel({str(self.path)!r}, reuse_prefix={self.reuse_prefix})"
