"""``openai:MODEL`` and ``openai-compatible:URL@MODEL`` through the official ``openai`` SDK.

* **OpenAI** (``openai:gpt-4o-mini``): the key comes from ``api_key=`` or ``OPENAI_API_KEY`` (and the
  SDK honours ``OPENAI_BASE_URL``). A plain string prompt is sent as one user message.
* **OpenAI-compatible servers** (vLLM, llama.cpp's ``llama-server`` or ``python -m llama_cpp.server``,
  Ollama, LM Studio): requests go only to the URL in the spec. The key is ``api_key=``, else
  ``LITM_COMPATIBLE_API_KEY``, else the placeholder ``sk-no-key`` that local servers accept. The user's
  ``OPENAI_API_KEY`` is never sent to a third-party URL. A plain string prompt
  goes to ``/completions`` unchanged, so a base model sees exactly the text; messages go to
  ``/chat/completions`` and the server applies its model's chat template.

Reasoning models (the o-series, GPT-5 except its ``-chat`` variants) reject ``temperature``, ``stop`` and
``seed``: litm does not send them, cuts the answer at the first stop sequence itself, and marks the
completion ``sampled`` (these models always sample). Every OpenAI request sets ``max_completion_tokens``
(for a reasoning model it also pays for the hidden reasoning); servers get ``max_tokens``.

Timeouts and retries are the SDK's: ``max_retries`` retries with exponential backoff (0.5 s doubling, up to
8 s, honouring ``Retry-After``) on connection errors, 408, 409, 429 and 5xx. Token usage is read from each
response. Failures become typed errors: a server that is down is a :class:`~litm.errors.ModelError`
naming the URL, an over-long prompt a :class:`~litm.errors.ContextWindowExceededError`.

>>> model = OpenAIModel("qwen2.5", base_url="http://127.0.0.1:8080/v1", compatible=True)
>>> model.remote, model.base_url
(True, 'http://127.0.0.1:8080/v1')
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Literal

from litm.errors import (
    ContextWindowExceededError,
    InvalidOptionError,
    LogprobsUnavailableError,
    MissingDependencyError,
    ModelError,
)
from litm.models._base import Completion, GenerationRequest, NativePrompt, PromptLike
from litm.models._echo import EchoScorer
from litm.models._logprobs import Logprobs
from litm.models._sdk import SdkModel
from litm.models.tokenizers._base import Tokenizer
from litm.models.tokenizers._bpe import openai_tokenizer
from litm.models.tokenizers._estimate import ANY_MODEL_MARGIN, EstimateTokenizer
from litm.prompt import Prompt

if TYPE_CHECKING:  # the ``openai`` SDK is an optional extra, imported on first use
    import httpx
    import openai

#: Environment variable holding the key for ``openai-compatible:`` servers.
COMPATIBLE_KEY_ENV = "LITM_COMPATIBLE_API_KEY"

_INSTALL = "pip install 'litm[openai]'"
#: Context windows published by OpenAI (prefix match, most specific first); ``context_window=`` overrides.
OPENAI_CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-5", 400_000),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
)


_REASONING = re.compile(r"^(o[1-9](-|$)|gpt-5(?!(\.\d+)?-chat))")


def is_reasoning_model(model: str) -> bool:
    """Whether an OpenAI model id is a reasoning model, which rejects ``temperature``, ``stop`` and ``seed``.

    >>> is_reasoning_model("o3-mini"), is_reasoning_model("gpt-5"), is_reasoning_model("gpt-5-chat-latest")
    (True, True, False)
    >>> is_reasoning_model("gpt-4o")
    False
    """
    return bool(_REASONING.match(model.strip().lower()))


def _import_openai() -> ModuleType:
    try:
        import openai
    except ImportError as exc:
        raise MissingDependencyError(f"OpenAI and OpenAI-compatible models need the openai SDK: {_INSTALL}") from exc
    return openai


class OpenAIModel(SdkModel):
    """A model behind the OpenAI API or an OpenAI-compatible server (see the module docstring).

    Options: ``timeout`` (seconds per request), ``max_retries``, ``concurrency`` (parallel requests in
    :func:`~litm.models.complete_many`), ``context_window`` (else OpenAI's published size, or what the
    server reports at ``/models``: vLLM's ``max_model_len``, llama.cpp's ``n_ctx_train``), ``tokenizer``
    (a Tokenizer, for exact counts on a server; :func:`~litm.models.load_model` also takes a spec such as
    ``"local:/same/model.gguf"``),
    ``string_prompts`` (``"completions"`` or ``"chat"``), ``http_client`` (an ``httpx`` client for proxies
    or tests).
    """

    def __init__(
        self,
        model: str,
        *,
        spec: str | None = None,
        base_url: str | None = None,
        compatible: bool = False,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        concurrency: int = 4,
        context_window: int | None = None,
        tokenizer: Tokenizer | None = None,
        string_prompts: Literal["completions", "chat"] | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        if compatible and not base_url:
            raise InvalidOptionError(f"an OpenAI-compatible model needs base_url, got {base_url!r}")
        if string_prompts not in (None, "completions", "chat"):
            raise InvalidOptionError(f"string_prompts must be 'completions' or 'chat', got {string_prompts!r}")
        url = base_url.rstrip("/") if base_url else None
        super().__init__(
            model,
            spec=spec or (f"openai-compatible:{url}@{model}" if compatible else f"openai:{model}"),
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            concurrency=concurrency,
            context_window=context_window,
            http_client=http_client,
        )
        self.compatible = compatible
        self.base_url = url
        self.key_env = COMPATIBLE_KEY_ENV if compatible else "OPENAI_API_KEY"
        self.string_prompts = string_prompts or ("completions" if compatible else "chat")
        self._tokenizer_option = tokenizer
        self._tokenizer: Tokenizer | None = None
        #: True for a reasoning model (see :func:`is_reasoning_model`); never for a compatible server.
        self.reasoning = not compatible and is_reasoning_model(model)
        self._echo: EchoScorer | None = None

    # -- client ------------------------------------------------------------------------------------
    @property
    def where(self) -> str:
        """The endpoint requests go to, for error messages."""
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"

    def _sdk(self) -> ModuleType:
        return _import_openai()

    def _make_client(self, sdk: ModuleType) -> openai.OpenAI:
        key: str | None
        if self.compatible:
            # An OpenAI key is a secret for OpenAI: a compatible server gets its own variable, or a
            # placeholder (local servers ignore the key, but the SDK requires one).
            key = self._api_key or os.environ.get(COMPATIBLE_KEY_ENV) or "sk-no-key"
        else:
            key = self._api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise ModelError(f"no OpenAI API key for {self.spec}: set OPENAI_API_KEY or pass api_key=")
        client: openai.OpenAI = sdk.OpenAI(
            api_key=key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            http_client=self._http_client,
        )
        return client

    # -- facts -------------------------------------------------------------------------------------
    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            option = self._tokenizer_option
            if option is not None:
                self._tokenizer = option
            elif self.compatible:
                # The served model may have a small vocabulary: the wider margin (docs/results/bench-estimate).
                estimate = EstimateTokenizer(label="estimate", margin=ANY_MODEL_MARGIN)
                estimate.note = f"the tokenizer of {self.spec} is unknown (pass tokenizer=): counts are estimated"
                self._tokenizer = estimate
            else:
                self._tokenizer = openai_tokenizer(self.name)
        return self._tokenizer

    def _render_prompt(self, prompt: Prompt) -> NativePrompt:
        if self.string_prompts == "completions":
            return prompt.text  # a server's /completions: the model sees exactly the plain text
        return super()._render_prompt(prompt)

    def _native(self, prompt: NativePrompt) -> NativePrompt:
        # A chat API takes messages only: a string is one user message, and is counted as one.
        if isinstance(prompt, str) and self.string_prompts == "chat":
            return [{"role": "user", "content": prompt}]
        return prompt

    @property
    def context_window(self) -> int:
        if self._context_window is None:
            self._context_window = self._known_context_window()
        return self._context_window

    def _known_context_window(self) -> int:
        if not self.compatible:
            for prefix, size in OPENAI_CONTEXT_WINDOWS:
                if self.name.startswith(prefix):
                    return size
            raise ModelError(f"the context window of {self.name} is not known to litm: pass context_window=N")
        listing = self._call(self._client().models.list)
        for entry in getattr(listing, "data", []):
            info = entry.model_dump() if hasattr(entry, "model_dump") else dict(entry)
            if info.get("id") != self.name and len(listing.data) > 1:
                continue
            meta = info.get("meta") or {}
            for value in (info.get("max_model_len"), info.get("context_length"), meta.get("n_ctx_train")):
                if isinstance(value, int) and value > 0:
                    return value
        raise ModelError(f"{self.where} does not report the context window of {self.name}: pass context_window=N")

    # -- generation --------------------------------------------------------------------------------
    def _generate(self, request: GenerationRequest) -> Completion:
        """Send one request; greedy by default. Usage comes from the response's ``usage`` block."""
        self._precheck(request.prompt, request.max_tokens)
        client = self._client()
        # Reasoning models answer 400 to temperature, stop and seed: they always sample.
        sampling: dict[str, object] = {}
        if not self.reasoning:
            sampling = {"temperature": request.temperature, "seed": request.seed}
            if request.stop:
                sampling["stop"] = list(request.stop)
        start = time.perf_counter()
        if isinstance(request.prompt, str):
            resp = self._call(
                client.completions.create, model=self.name, prompt=request.prompt, max_tokens=request.max_tokens,
                **sampling,
            )  # fmt: skip
            choice = resp.choices[0]
            text = choice.text or ""
        else:
            # OpenAI's own API replaced max_tokens with max_completion_tokens; servers know max_tokens.
            limit = {"max_tokens" if self.compatible else "max_completion_tokens": request.max_tokens}
            resp = self._call(
                client.chat.completions.create, model=self.name, messages=request.prompt, **sampling, **limit
            )
            choice = resp.choices[0]
            text = (choice.message.content if choice.message is not None else None) or ""
        latency = time.perf_counter() - start
        finish = str(choice.finish_reason or "stop")
        if self.reasoning and request.stop:
            text, finish = _cut_at_stop(text, request.stop, finish)
        usage = getattr(resp, "usage", None)
        if usage is not None:
            # prompt_tokens already includes the cached tokens (OpenAI reports them inside it).
            input_tokens, output_tokens = int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)
            details = getattr(usage, "prompt_tokens_details", None)
            cached = int(getattr(details, "cached_tokens", 0) or 0)
        else:  # a few servers omit usage: count with our tokenizer instead of reporting zero
            input_tokens, output_tokens, cached = self.count_tokens(request.prompt), self.tokenizer.count(text), 0
        return Completion(
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            latency_s=latency,
            finish_reason=finish,
            model=str(getattr(resp, "model", None) or self.name),
            cached_tokens=cached,
            sampled=self.reasoning or not request.greedy,
        )

    def continuation_logprobs(self, prompt: PromptLike, continuations: Sequence[str]) -> list[Logprobs]:
        """Teacher-forced log-probabilities of each continuation after ``prompt``, from a compatible server.

        Needs a completion (string) prompt and a server that echoes prompt log-probabilities on
        ``/completions``, which litm checks on first use (see :mod:`litm.models._echo`); otherwise
        :class:`~litm.errors.LogprobsUnavailableError`. OpenAI's own API returns none.

        >>> model = load_model("openai-compatible:http://127.0.0.1:8000/v1@qwen")      # doctest: +SKIP
        >>> model.continuation_logprobs("2 + 2 =", [" 4"])[0].mean                       # doctest: +SKIP
        -0.0123
        """
        if not self.compatible:
            raise LogprobsUnavailableError(f"{self.spec}: OpenAI's API returns no log-probabilities of a prompt")
        if isinstance(continuations, str):
            raise InvalidOptionError("continuations is a list of strings, not one string")
        native = self.render(prompt)
        if not isinstance(native, str):
            raise LogprobsUnavailableError(
                f"{self.spec}: prompt log-probabilities need a completion prompt (a string; the server's "
                "/completions echoes them), not chat messages, whose template only the server knows"
            )
        for cont in continuations:
            if not isinstance(cont, str) or not cont:
                raise InvalidOptionError(f"a continuation must be a non-empty string, got {cont!r}")
        if self._echo is None:
            client = self._client()
            self._echo = EchoScorer(lambda **kw: self._call(client.completions.create, **kw), self.name, self.where)
        return self._echo.score(native, continuations)

    def _precheck(self, prompt: NativePrompt, max_tokens: int) -> None:
        """Refuse an over-long prompt before sending it, when both the window and the count are exact."""
        if self._context_window is None or not self.tokenizer.exact:
            return
        used = self.count_tokens(prompt)
        if used + max_tokens > self._context_window:
            raise ContextWindowExceededError(
                f"prompt of {used} tokens plus max_tokens={max_tokens} exceeds the "
                f"{self._context_window}-token context window of {self.spec}"
            )


def _cut_at_stop(text: str, stops: tuple[str, ...], finish: str) -> tuple[str, str]:
    """The answer up to the first stop sequence, as the API would have cut it (for models that take none)."""
    cuts = [i for i in (text.find(s) for s in stops) if i >= 0]
    return (text[: min(cuts)], "stop") if cuts else (text, finish)
