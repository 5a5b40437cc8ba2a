"""``anthropic:MODEL`` through the official ``anthropic`` SDK.

The key comes from ``api_key=`` or ``ANTHROPIC_API_KEY``; requests go only to Anthropic's API (or the
``base_url`` you pass). System messages are sent as the ``system`` parameter, a plain string prompt as one
user message, a built :class:`litm.Prompt` as its ``messages("anthropic")``.

**Claude runs are sampled.** The ``anthropic`` 2.x SDK sends API version ``2026-10-21``, under which the
Messages API rejects ``temperature``, ``top_p`` and ``top_k`` at any value (HTTP 400), and the SDK dropped
the parameters; the API has no ``seed``. So litm sends no temperature and marks every completion
``sampled=True``: the same prompt can answer differently, and probe or benchmark rows say so. Pass
``api_version="2023-06-01"`` to get the older contract, under which litm sends ``temperature`` (through
``extra_body`` where the SDK lacks the keyword) and greedy runs are ``sampled=False``; Anthropic lists that
version as deprecated, and its newest models reject a temperature under it too.

Usage is normalised: ``Completion.input_tokens`` counts every input token, cache reads and writes included
(Anthropic reports ``input_tokens`` without them), ``cached_tokens`` the cache reads and
``cache_write_tokens`` the cache writes. ``complete(..., cache_at=[offsets])`` on a string prompt sends
it as text blocks cut at those offsets, each block that ends at one marked ``cache_control: ephemeral``
(at most four), so Anthropic caches those prefixes (the probe marks the prefixes its prompts share).
Retries with exponential backoff on connection errors, 408, 409, 429 and 5xx are the SDK's (``max_retries``).

Token counts use Anthropic's ``count_tokens`` endpoint when a key is configured (exact, chat overhead
included; it sends the text to Anthropic, like a request would), otherwise the script-aware estimate with
its margin (:mod:`litm.models.tokenizers._estimate`). Pass ``count_with_api=False`` to never send text just
to count it.

>>> model = AnthropicModel("claude-haiku-4-5", api_key=None, count_with_api=False)
>>> model.context_window, model.tokenizer.exact, model.tokenizer.margin
(200000, False, 0.15)
"""

from __future__ import annotations

import inspect
import itertools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from litm.errors import InvalidOptionError, MissingDependencyError, ModelError, PromptError
from litm.models._base import Completion, GenerationRequest, NativePrompt
from litm.models._sdk import SdkModel
from litm.models.tokenizers._base import TokenCount, count_billed
from litm.models.tokenizers._estimate import EstimateTokenizer
from litm.prompt import Prompt
from litm.prompt._messages import Message, billed_request, check_messages

if TYPE_CHECKING:  # the ``anthropic`` SDK is an optional extra, imported on first use
    import anthropic
    import httpx

_INSTALL = "pip install 'litm[anthropic]'"
#: Every current Claude model accepts 200k tokens; ``context_window=`` overrides (e.g. for 1M-token betas).
CLAUDE_CONTEXT_WINDOW = 200_000
#: The request fields the ``count_tokens`` endpoint takes (everything that is billed as input).
_COUNTED_FIELDS = ("system", "messages", "tools", "tool_choice", "thinking")
_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}
#: Cache breakpoints (``cache_control`` blocks) the Messages API accepts in one request.
MAX_CACHE_BREAKPOINTS = 4
#: The API version under which the Messages API still takes ``temperature``.
SAMPLING_API_VERSION = "2023-06-01"


def _import_anthropic() -> ModuleType:
    try:
        import anthropic
    except ImportError as exc:
        raise MissingDependencyError(f"Anthropic models need the anthropic SDK: {_INSTALL}") from exc
    return anthropic


def split_system(messages: Sequence[Message]) -> tuple[str | None, list[dict[str, str]]]:
    """Anthropic's request shape: system messages joined into one ``system`` string, the rest in order.

    >>> split_system([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    ('Be brief.', [{'role': 'user', 'content': 'Hi'}])
    """
    checked = check_messages(messages)
    system = [m["content"] for m in checked if m["role"] == "system"]
    turns = [{"role": m["role"], "content": m["content"]} for m in checked if m["role"] != "system"]
    if not turns:
        raise PromptError("Anthropic needs at least one user message besides the system prompt")
    return ("\n\n".join(system) if system else None), turns


class AnthropicTokenizer:
    """Counts for an :class:`AnthropicModel`: the ``count_tokens`` endpoint, or a marked estimate."""

    def __init__(self, model: AnthropicModel) -> None:
        self._model = model
        self._estimate = EstimateTokenizer(label="estimate")
        self._estimate.note = "Claude's tokenizer is not published and no API key is set: counts are estimated"

    @property
    def margin(self) -> float:
        """0 with the ``count_tokens`` endpoint, else the estimate's margin."""
        return 0.0 if self.exact else self._estimate.margin

    @property
    def note(self) -> str:
        return "" if self.exact else self._estimate.note

    @property
    def name(self) -> str:
        return "anthropic:count_tokens" if self.exact else self._estimate.name

    @property
    def exact(self) -> bool:
        return self._model.counts_with_api

    def encode(self, text: str) -> list[int]:
        raise ModelError("Anthropic does not publish its tokenizer: only counts are available")

    def count(self, text: str) -> int:
        """Tokens of ``text``; with the endpoint, as one user message (its small overhead included)."""
        if not self.exact:
            return self._estimate.count(text)
        return self.count_messages([{"role": "user", "content": text}])

    def count_messages(self, messages: Sequence[Message]) -> int:
        if not self.exact:
            return self._estimate.count_messages(messages)
        system, turns = split_system(messages)
        kwargs: dict[str, object] = {"model": self._model.name, "messages": turns}
        if system is not None:
            kwargs["system"] = system
        client = self._model._client()
        result = self._model._call(client.messages.count_tokens, **kwargs)
        return int(result.input_tokens)

    def count_request(self, request: Mapping[str, Any], api: str) -> TokenCount:
        """A whole request: exact from the ``count_tokens`` endpoint (system blocks, tools, tool use and
        results included) when a key is configured, else the estimate over its billed text."""
        if not self.exact or api != "anthropic":
            return count_billed(self._estimate, billed_request(request, api))
        kwargs = {k: request[k] for k in _COUNTED_FIELDS if request.get(k) is not None}
        kwargs["model"] = self._model.name
        client = self._model._client()
        result = self._model._call(client.messages.count_tokens, **kwargs)
        return TokenCount(int(result.input_tokens), True)


class AnthropicModel(SdkModel):
    """A Claude model behind Anthropic's Messages API (see the module docstring).

    Options: ``api_key``, ``base_url``, ``timeout``, ``max_retries``, ``concurrency``, ``context_window``,
    ``count_with_api`` (None: when a key is configured), ``api_version`` (the ``anthropic-version`` header;
    default: the SDK's), ``http_client`` (an ``httpx`` client).
    """

    key_env = "ANTHROPIC_API_KEY"

    def __init__(
        self,
        model: str,
        *,
        spec: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        concurrency: int = 4,
        context_window: int | None = None,
        count_with_api: bool | None = None,
        api_version: str | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        if api_version is not None and not (isinstance(api_version, str) and api_version.strip()):
            raise InvalidOptionError(f"api_version must be a version string such as '2023-06-01', got {api_version!r}")
        super().__init__(
            model,
            spec=spec or f"anthropic:{model}",
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            concurrency=concurrency,
            context_window=context_window,
            http_client=http_client,
        )
        self.base_url = base_url
        self.count_with_api = count_with_api
        self.api_version = api_version
        self._tokenizer = AnthropicTokenizer(self)

    @property
    def where(self) -> str:
        return self.base_url or os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com"

    @property
    def has_key(self) -> bool:
        """Whether an API key is configured (``api_key=`` or ``ANTHROPIC_API_KEY``)."""
        return bool(self._api_key or os.environ.get("ANTHROPIC_API_KEY"))

    @property
    def counts_with_api(self) -> bool:
        """Whether token counts come from the ``count_tokens`` endpoint (exact) rather than an estimate."""
        return self.has_key if self.count_with_api is None else (self.count_with_api and self.has_key)

    def _sdk(self) -> ModuleType:
        return _import_anthropic()

    def _make_client(self, sdk: ModuleType) -> anthropic.Anthropic:
        if not self.has_key:
            raise ModelError(f"no Anthropic API key for {self.spec}: set ANTHROPIC_API_KEY or pass api_key=")
        headers = {"anthropic-version": self.api_version} if self.api_version else None
        client: anthropic.Anthropic = sdk.Anthropic(
            api_key=self._api_key or os.environ["ANTHROPIC_API_KEY"],
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            http_client=self._http_client,
            default_headers=headers,
        )
        return client

    @property
    def context_window(self) -> int:
        if self._context_window is not None:
            return self._context_window
        if self.name.startswith("claude"):
            return CLAUDE_CONTEXT_WINDOW
        raise ModelError(f"the context window of {self.name} is not known to litm: pass context_window=N")

    @property
    def tokenizer(self) -> AnthropicTokenizer:
        return self._tokenizer

    def _render_prompt(self, prompt: Prompt) -> NativePrompt:
        args = prompt.messages("anthropic")
        if not isinstance(args, Mapping):
            raise PromptError(f"a prompt's Anthropic arguments must be a dict, got {type(args).__name__}")
        system = [{"role": "system", "content": args["system"]}] if args.get("system") else []
        return check_messages([*system, *args["messages"]])

    def _native(self, prompt: NativePrompt) -> NativePrompt:
        return [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt

    def _generate(self, request: GenerationRequest) -> Completion:
        """Send one Messages request (``seed`` is not sent: the API has none; see the module docstring
        for ``temperature``)."""
        if isinstance(request.prompt, str):  # _native makes every prompt a message list
            raise PromptError("the Messages API takes messages; a string prompt is sent as one user message")
        system, turns = split_system(request.prompt)
        messages: list[dict[str, object]] = [dict(turn) for turn in turns]
        if request.cache_at:
            messages = [_with_breakpoints(turns[0], request.cache_at)]  # a string prompt is one user turn
        kwargs: dict[str, object] = {"model": self.name, "max_tokens": request.max_tokens, "messages": messages}
        if system is not None:
            kwargs["system"] = system
        if request.stop:
            kwargs["stop_sequences"] = list(request.stop)
        client = self._client()
        version = str(client.default_headers.get("anthropic-version", ""))
        sends_temperature = version == SAMPLING_API_VERSION
        if sends_temperature:
            if _accepts(client.messages.create, "temperature"):
                kwargs["temperature"] = request.temperature
            else:  # the 2.x SDK dropped the keyword; the older API version still takes the field
                kwargs["extra_body"] = {"temperature": request.temperature}
        start = time.perf_counter()
        resp = self._call(client.messages.create, **kwargs)
        latency = time.perf_counter() - start
        text = "".join(getattr(block, "text", "") for block in resp.content if getattr(block, "type", "") == "text")
        usage = resp.usage
        read = int(getattr(usage, "cache_read_input_tokens", 0) or 0)
        written = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
        reason = str(resp.stop_reason or "stop")
        return Completion(
            text=text,
            # Anthropic reports cache reads and writes apart from input_tokens; litm counts all input.
            input_tokens=int(usage.input_tokens or 0) + read + written,
            output_tokens=int(usage.output_tokens or 0),
            latency_s=latency,
            finish_reason=_STOP_REASONS.get(reason, reason),
            model=str(resp.model or self.name),
            cached_tokens=read,
            cache_write_tokens=written,
            sampled=not (sends_temperature and request.greedy),
        )


def _with_breakpoints(turn: Mapping[str, str], offsets: Sequence[int]) -> dict[str, object]:
    """The turn's text as content blocks cut at ``offsets``, each block that ends at one marked for caching.

    >>> _with_breakpoints({"role": "user", "content": "abcdef"}, (2,))["content"]
    [{'type': 'text', 'text': 'ab', 'cache_control': {'type': 'ephemeral'}}, {'type': 'text', 'text': 'cdef'}]
    """
    if len(offsets) > MAX_CACHE_BREAKPOINTS:
        raise InvalidOptionError(
            f"Anthropic takes at most {MAX_CACHE_BREAKPOINTS} cache breakpoints a request, got {len(offsets)}"
        )
    text = turn["content"]
    cuts = [0, *offsets, len(text)]
    blocks: list[dict[str, object]] = []
    for i, (a, b) in enumerate(itertools.pairwise(cuts)):
        block: dict[str, object] = {"type": "text", "text": text[a:b]}
        if i < len(offsets):
            block["cache_control"] = {"type": "ephemeral"}
        blocks.append(block)
    return {"role": turn["role"], "content": blocks}


def _accepts(fn: Callable[..., object], name: str) -> bool:
    """Whether the installed SDK's ``fn`` takes the keyword ``name`` (the 1.x and 2.x SDKs dropped ``temperature``)."""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
