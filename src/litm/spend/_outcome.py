"""Whether a call that failed may still be billed: the one rule for refunding or charging its hold.

A hold is refunded only when nothing can have been billed; otherwise it is charged in full, because the
provider may have run the request to its worst case and nothing says less (fail closed):

* **not sent**: no attempt left the process, or the connection was never made (``ConnectError``,
  ``ConnectTimeout``, ``PoolTimeout``, connection refused, name resolution): refund;
* **refused by the provider**: an answer with a 4xx status (400, 401, 403, 404, 408, 409, 413, 422, 429,
  ...) or 503 / 529 (overloaded): the provider turned the request away before running it, and providers
  do not bill requests they refuse: refund;
* **anything else after the request left**: a timeout while waiting for the answer, a connection dropped
  mid-answer, a 500, 502 or 504 (the request may have run), an answer that could not be read, an
  interrupt: **charged in full**.

The evidence is read from the error and every error it was raised from (``__cause__`` / ``__context__``):
the status of an SDK ``APIStatusError`` (or an HTTP library's status error), the class names of the HTTP
library's transport errors (by name, because the SDKs use two HTTP libraries, ``httpx`` and ``httpx2``).

>>> may_be_billed(None, sent=False), refused_status(429), refused_status(500)
(False, True, False)
>>> class APIStatusError(Exception):
...     status_code = 429
>>> may_be_billed(RuntimeError("model failed"), sent=True), may_be_billed(APIStatusError(), sent=True)
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterator

from litm.errors import LitmError, MissingDependencyError, PromptError, SpendRequestError

__all__ = ["may_be_billed", "refused_status", "status_of"]

#: Transport errors raised before any byte of the request reached the provider.
_NEVER_CONNECTED = frozenset({"ConnectError", "ConnectTimeout", "PoolTimeout", "ConnectionRefusedError", "gaierror"})
#: Transport errors that may come after the request was written (a read timeout, a dropped answer).
_AFTER_CONNECTING = frozenset({"TransportError", "TimeoutException", "NetworkError", "ProtocolError",
                               "APIConnectionError", "APITimeoutError", "ConnectionError", "TimeoutError"})  # fmt: skip
#: litm's own refusals, raised before a backend sends anything.
_BEFORE_SENDING = (PromptError, SpendRequestError, MissingDependencyError)


def refused_status(status: int) -> bool:
    """True for an HTTP status with which a provider turns a request away unrun (4xx, 503, 529)."""
    return 400 <= status < 500 or status in (503, 529)


def _chain(error: BaseException | None) -> Iterator[BaseException]:
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def status_of(error: BaseException | None) -> int | None:
    """The HTTP status an error (or one it was raised from) carries, or None.

    litm's own errors are skipped: :class:`~litm.errors.SpendBudgetExceeded` has ``status_code = 402`` for
    web layers, but it never came from a provider.
    """
    for e in _chain(error):
        if isinstance(e, LitmError):
            continue
        for status in (getattr(e, "status_code", None), getattr(getattr(e, "response", None), "status_code", None)):
            if isinstance(status, int) and not isinstance(status, bool):
                return status
    return None


def may_be_billed(error: BaseException | None, *, sent: bool | None = None) -> bool:
    """Whether a call that ended with ``error`` may have been billed (see the module docstring).

    ``sent`` is what the caller knows: False when nothing was handed to the HTTP client, True when an
    attempt was, None when it cannot tell (a litm model hides its HTTP client). Without evidence in the
    error, a sent (or possibly sent) call is billed, except litm's own refusals (bad prompt or options, a
    missing dependency, a model error raised from nothing) that come before any request.
    """
    if sent is False:
        return False
    status = status_of(error)
    if status is not None:
        return not refused_status(status)
    names = {cls.__name__ for e in _chain(error) if not isinstance(e, LitmError) for cls in type(e).__mro__}
    if names & _NEVER_CONNECTED:
        return False
    if names & _AFTER_CONNECTING or sent:
        return True
    return not (isinstance(error, _BEFORE_SENDING) or (isinstance(error, LitmError) and error.__cause__ is None))
