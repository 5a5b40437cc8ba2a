"""Typed errors raised by litm.

Every error a user can cause derives from :class:`LitmError`, so ``except LitmError`` catches all of
them, and each also derives from the matching built-in (``ValueError``, ``TypeError``) so that code
written against the standard library keeps working. Messages are one line and name the offending item.
"""

from __future__ import annotations


class LitmError(Exception):
    """Base class of every error litm raises on purpose."""


class InvalidOptionError(LitmError, ValueError):
    """A keyword argument or command-line option has a value litm does not accept.

    For example ``rank_by="best"`` or ``top_k=-1``; the message names the option and what it accepts.
    """


class CommandConfigError(InvalidOptionError):
    """A command's ``--config`` file (``litm probe --config probe.toml``) cannot be used: it is not readable
    TOML, or it has a key the command does not take or a value of the wrong type. The message names the
    file and the key."""


class InvalidOptionTypeError(InvalidOptionError, TypeError):
    """An option has the wrong type (``min_docs="3"``, ``profile=[0.9, 0.5]``).

    An :class:`InvalidOptionError` that is also a ``TypeError``, which the standard library raises for an
    argument of the wrong type, so either ``except`` catches it.
    """


class InvalidDocumentError(LitmError, TypeError):
    """An item cannot be read as a document (``None``, wrong type, non-text content).

    ``index`` is the item's position in the caller's list and ``field`` the offending field of a
    :class:`~litm.placement.Doc` (``"id"``, ``"text"``, ...), when known.
    """

    def __init__(self, message: str, *, index: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.index = index
        self.field = field


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


class InvalidStrategyError(LitmError, TypeError):
    """A strategy breaks the strategy contract.

    A factory that is not callable or builds no :class:`~litm.placement.Strategy`, or an ``arrange(n)``
    that returns no permutation of ``range(n)``.
    """


class AlreadyRegisteredError(LitmError, ValueError):
    """A plugin name (a placement strategy, a model backend scheme) is taken; pass ``replace=True`` to replace it."""


class InvalidProfileError(LitmError, ValueError):
    """A position profile is malformed (no points, positions outside [0, 1], bad weights)."""


class InputFormatError(LitmError, ValueError):
    """Input text (JSON Lines or a JSON array) cannot be parsed."""


class PromptError(LitmError, ValueError):
    """A prompt cannot be built or parsed (bad template, unknown format or language, malformed prompt)."""


class PromptOptionError(PromptError, InvalidOptionError):
    """A prompt option is invalid: both a :class:`PromptError` (as prompt settings always raised) and an
    :class:`InvalidOptionError`, so either ``except`` catches it."""


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
    every droppable part removed: system, instructions and question alone) and ``advice``. When the count
    is approximate, ``margin`` is the safety margin applied and ``upper`` the bound compared with the budget.
    """

    def __init__(
        self,
        message: str,
        *,
        prompt_tokens: int,
        budget: int,
        floor: int | None = None,
        advice: str = "",
        margin: float = 0.0,
        upper: int | None = None,
    ) -> None:
        full = f"{message} ({advice})" if advice else message
        super().__init__(full)
        self.prompt_tokens = prompt_tokens
        self.budget = budget
        self.floor = floor
        self.advice = advice
        #: The safety margin applied because the count is approximate (0.0 when it is exact), and the bound
        #: ``ceil(prompt_tokens * (1 + margin))`` that was compared with the budget.
        self.margin = margin
        self.upper = prompt_tokens if upper is None else upper


class UnsupportedTypeError(LitmError, TypeError):
    """An object handed to litm (a client to guard, a tokenizer, a prompt builder) is of a type it cannot use."""


class UngatedRequestError(LitmError, ValueError):
    """A guarded SDK client was asked to send something its gate cannot check; nothing was sent.

    Raised for endpoints the token gate does not know how to count (the legacy Completions API, batches,
    assistants runs, ...) and for WebSocket sessions (Realtime, Responses over WebSocket). ``path`` names
    the endpoint; ``guard(..., allow=[path])`` lets a prompt-free endpoint through on purpose.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class CodeFileNotFoundError(LitmError, FileNotFoundError):
    """A code-context target names a file (or root folder) that does not exist."""


class CodeTargetNotFoundError(LitmError, LookupError):
    """A code-context target names a function, class or line that the file does not define."""


class AmbiguousCodeTargetError(LitmError, LookupError):
    """A code-context target matches more than one definition; the message lists them with their lines."""

    def __init__(self, message: str, *, candidates: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.candidates = candidates


class UnsupportedLanguageError(LitmError, ValueError):
    """A source file is in a language litm's code context cannot parse, or exact resolution is not offered."""


class CodeParseError(LitmError, ValueError):
    """A source file the target lives in cannot be parsed (a syntax error), so no span can be trusted."""


class CodeTargetTooLargeError(ContextBudgetExceeded):
    """The code-context target alone needs more tokens than the budget; the target is never cut.

    ``target_tokens`` is what the target alone costs (as rendered, with any prompt around it).
    """

    def __init__(self, message: str, *, target_tokens: int, budget: int, advice: str = "") -> None:
        super().__init__(message, prompt_tokens=target_tokens, budget=budget, floor=target_tokens, advice=advice)
        self.target_tokens = target_tokens


class SpendBudgetExceeded(LitmError, RuntimeError):
    """A reservation does not fit one scope of its chain; nothing was written and nothing was sent.

    Carries the numbers of the first scope that refused, all in integer micro-dollars: ``scope``,
    ``window`` (``total``, ``daily``, ``monthly``), ``limit``, ``settled``, ``held`` and ``requested``.
    ``status_code`` is 402 (Payment Required) so that web layers can pass it through as is.
    """

    status_code = 402

    def __init__(
        self, message: str, *, scope: str, window: str, limit: int, settled: int, held: int, requested: int
    ) -> None:
        super().__init__(message)
        self.scope = scope
        self.window = window
        self.limit = limit
        self.settled = settled
        self.held = held
        self.requested = requested


class PriceUnknownError(LitmError, LookupError):
    """A model, provider or one of the rates a call needs is not in the price table."""


class PriceTableError(LitmError, ValueError):
    """A price table file is malformed, or its sha256 does not match its content."""


class LedgerUnavailableError(LitmError, ConnectionError):
    """The spend ledger cannot be reached or answered with an error; the call is refused (fail closed)."""


class LedgerBusyError(LedgerUnavailableError):
    """Another connection held the SQLite ledger's write lock for longer than the short wait asked for with
    ``SQLiteLedger.lock_wait(seconds)``; nothing was written, so the operation may simply be tried again (the
    gateway then waits in a worker thread instead of on its event loop). Outside ``lock_wait`` a lock that is
    not freed in time is a plain :class:`LedgerUnavailableError`."""


class ReserveUncertainError(LedgerUnavailableError):
    """A reserve was sent to the ledger and its answer never came (a timeout, a dropped connection).

    The hold may exist once the store answers again. ``key`` names it: a retry of the reserve with that key
    returns the hold if it was booked (no second hold), and ``SpendCap.release(key)`` releases it.
    """

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


class CorruptLedgerError(LedgerUnavailableError):
    """The spend ledger's file is damaged or holds a record litm cannot read; the call is refused."""


class LedgerNotFoundError(LitmError, FileNotFoundError):
    """A spend ledger file that a command only reads or administers does not exist (it is never created)."""


class SpendRequestError(LitmError, ValueError):
    """Bad input to the spend cap: a negative amount, a missing ``max_tokens``, an unknown window, a bad scope."""


class SpendLimitNotSetError(LitmError, LookupError):
    """A scope in a reservation's chain has no limit in the ledger (an unconfigured scope is never unlimited)."""


class ReservationError(LitmError, ValueError):
    """A reservation key is unknown, or reused with different terms, or the reservation is already closed."""


class GatewayConfigError(LitmError, ValueError):
    """A ``litm serve`` configuration (TOML file or ``LITM_SERVE__*`` variable) is invalid: an unknown option, a
    value of the wrong type, a model whose upstream is not configured or whose price is unknown."""


class VirtualKeyError(LitmError, LookupError):
    """A gateway virtual key is unknown, revoked, or its key store cannot be read."""


class ModelIntegrityError(ModelError):
    """A model file's content hash differs from the pinned one (tampered, truncated or a different release)."""


class IndexNotFoundError(LitmError, FileNotFoundError):
    """A retrieval index directory (or its manifest) does not exist."""


class CorruptIndexError(LitmError, ValueError):
    """A retrieval index file is unreadable, truncated or does not match the hash its manifest records.

    ``file`` names the damaged file (``manifest.json``, ``chunks-....jsonl``) and ``detail`` says what is wrong
    with it, when known; the message adds how to repair it.
    """

    def __init__(self, message: str, *, file: str | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.detail = detail


class IndexVersionError(LitmError, ValueError):
    """A retrieval index was written in a format version this litm cannot read."""


class IndexMismatchError(LitmError, ValueError):
    """A retrieval index was built with other settings (chunking, embedding model) than the ones asked for."""


class RetrievalError(LitmError, ValueError):
    """A retrieval setting or request is invalid (``k < 1``, a chunk size the tokenizer cannot meet, an unknown
    retriever or vector backend, a dense search on an index built without vectors)."""


class LogprobsUnavailableError(ModelError, NotImplementedError):
    """A model cannot give the log-probabilities of a prompt's continuation (no prompt logprobs in its API, or
    a server whose echoed log-probabilities fail litm's consistency check)."""


class DataFileError(InputFormatError):
    """A benchmark data file (JSON Lines) breaks the documented format; ``line`` and ``field`` say where."""

    def __init__(self, message: str, *, path: str = "", line: int = 0, field: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.field = field


class CompressionError(LitmError, ValueError):
    """Context compression cannot do what was asked: no documents, a budget below the smallest sentence, no
    tokenizer to hold a token target with, an unreadable score cache."""


class UnreadableFileError(InputFormatError):
    """A file of a text format holds no readable text: binary data, or bytes that are mostly not UTF-8."""


class BenchError(EvalError):
    """A benchmark that cannot run as asked (bad settings, a resume that would mix settings)."""


class ProbeError(EvalError):
    """A probe cannot be set up or run: bad grid, unusable corpus, mismatched resume, unknown task or layout.

    Example:
        >>> raise ProbeError("length 16 is too short for the prompt (overhead 40 tokens)")
        Traceback (most recent call last):
        ...
        litm.errors.ProbeError: length 16 is too short for the prompt (overhead 40 tokens)
    """
