"""Typed errors raised by litm.

Every error a user can cause derives from :class:`LitmError`, so ``except LitmError`` catches all of
them, and each also derives from the matching built-in (``ValueError``, ``TypeError``) so that code
written against the standard library keeps working. Messages are one line and name the offending item.
"""

from __future__ import annotations


class LitmError(Exception):
    """Base class of every error litm raises on purpose."""


class InvalidDocumentError(LitmError, TypeError):
    """An item cannot be read as a document (``None``, wrong type, non-text content)."""

    def __init__(self, message: str, *, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


class InvalidScoreError(LitmError, ValueError):
    """A score is NaN, infinite or not a number, or scored and unscored items are mixed."""

    def __init__(self, message: str, *, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


class DuplicateIdError(LitmError, ValueError):
    """Two documents share an id while ids must be unique (ask for ``dedup="id"`` to merge them)."""

    def __init__(self, message: str, *, doc_id: str, indices: tuple[int, int]) -> None:
        super().__init__(message)
        self.doc_id = doc_id
        self.indices = indices


class UnknownStrategyError(LitmError, ValueError):
    """A placement strategy name is not registered."""


class AlreadyRegisteredError(LitmError, ValueError):
    """A plugin name (a placement strategy, a model backend scheme) is taken; pass ``replace=True`` to replace it."""


class InvalidProfileError(LitmError, ValueError):
    """A position profile is malformed (no points, positions outside [0, 1], bad weights)."""


class InputFormatError(LitmError, ValueError):
    """Input text (JSON Lines or a JSON array) cannot be parsed."""


class PromptError(LitmError, ValueError):
    """A prompt cannot be built or parsed (bad template, unknown format or language, malformed prompt)."""


class ModelError(LitmError, RuntimeError):
    """A model backend failed (server down, request rejected, bad response)."""


class UnknownModelSpecError(LitmError, ValueError):
    """A model spec string (``local``, ``openai:...``, ...) is not understood."""


class ModelNotFoundError(LitmError, FileNotFoundError):
    """A model file or model package is missing; the message names the install command."""


class MissingDependencyError(LitmError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


class ContextWindowExceededError(LitmError, ValueError):
    """A prompt is longer than the model's context window."""


class EvalError(LitmError, ValueError):
    """An evaluation cannot run or read its results: bad settings, a corrupt or mismatched results file."""


class ContextBudgetExceeded(LitmError, ValueError):
    """A prompt does not fit its token budget, and nothing litm may drop would make it fit.

    Carries the numbers a caller needs to act: ``prompt_tokens`` (what was asked for), ``budget``
    (the input-token budget after reserving output tokens), ``floor`` (the tokens of the prompt with
    every droppable part removed: system, instructions and question alone) and ``advice``.
    """

    def __init__(
        self,
        message: str,
        *,
        prompt_tokens: int,
        budget: int,
        floor: int | None = None,
        advice: str = "",
    ) -> None:
        full = f"{message} ({advice})" if advice else message
        super().__init__(full)
        self.prompt_tokens = prompt_tokens
        self.budget = budget
        self.floor = floor
        self.advice = advice


class ModelIntegrityError(ModelError):
    """A model file's content hash differs from the pinned one (tampered, truncated or a different release)."""


class IndexNotFoundError(LitmError, FileNotFoundError):
    """A retrieval index directory (or its manifest) does not exist."""


class CorruptIndexError(LitmError, ValueError):
    """A retrieval index file is unreadable, truncated or does not match the hash its manifest records."""


class IndexVersionError(LitmError, ValueError):
    """A retrieval index was written in a format version this litm cannot read."""


class IndexMismatchError(LitmError, ValueError):
    """A retrieval index was built with other settings (chunking, embedding model) than the ones asked for."""


class RetrievalError(LitmError, ValueError):
    """A retrieval setting or request is invalid (``k < 1``, a chunk size the tokenizer cannot meet, an unknown
    retriever or vector backend, a dense search on an index built without vectors)."""
