"""Releasing a hold the ledger may hold without having said so.

A reserve sent to a Redis ledger that did not answer in time (:class:`~litm.errors.ReserveUncertainError`)
may still be booked when the server answers again (the script waited in its socket buffer). The request
was refused and never sent upstream, so the hold must go back: :func:`release_when_answering` calls
``SpendCap.release(key)`` until the ledger answers, with a growing pause. A release that finds nothing is
checked once more after a pause, because a script still buffered at the server can land after the first
look. Until it succeeds the hold is only held (settled + held never passes the limit); if the ledger stays
away past ``give_up_s``, the hold's lease charges it in full when it expires (fail closed), and the log says
which key to release by hand (``litm spend release``).

>>> import asyncio, os, tempfile
>>> from litm.spend import SpendCap
>>> cap = SpendCap(os.path.join(tempfile.mkdtemp(), "s.db"), scopes=["run:1"])
>>> cap.set_limit("run:1", "1")
>>> _ = cap.reserve(amount="0.25", key="gw-1")
>>> asyncio.run(release_when_answering(cap, "gw-1", first_wait_s=0, give_up_s=5)).refunded
250000
"""

from __future__ import annotations

import asyncio
import logging
import time

from litm.errors import LedgerUnavailableError
from litm.spend import SpendCap
from litm.spend._ledger import Settlement

__all__ = ["Releases", "release_when_answering"]

log = logging.getLogger("litm.serve")

#: The longest pause between two tries.
MAX_PAUSE_S = 10.0

#: The releases running in the background, each task with the hold key it releases.
Releases = dict[asyncio.Task[Settlement | None], str]


async def release_when_answering(
    cap: SpendCap, key: str, *, first_wait_s: float, give_up_s: float
) -> Settlement | None:
    """Release hold ``key`` (a request that was never sent) once the ledger answers; None when it was never
    booked, or when the ledger did not answer within ``give_up_s`` (then its lease charges it)."""
    deadline = time.monotonic() + give_up_s
    pause, looked_once = first_wait_s, False
    while True:
        await asyncio.sleep(pause)
        try:
            released = await asyncio.to_thread(cap.release, key)
        except LedgerUnavailableError as exc:
            if time.monotonic() + pause > deadline:
                log.error("hold %s (a request refused because the ledger did not answer) could not be released: "
                          "the ledger still does not answer (%s); its lease charges it in full when it expires "
                          "unless it is released by hand (litm spend release)", key, type(exc).__name__)  # fmt: skip
                return None
            pause = min(MAX_PAUSE_S, max(0.05, pause * 2))
            continue
        if released is not None:
            log.warning("hold %s of a request refused because the ledger did not answer was booked after all: "
                        "released (%s)", key, released.state)  # fmt: skip
            return released
        if looked_once:
            return None  # never booked: nothing to release
        looked_once, pause = True, max(0.05, first_wait_s)
