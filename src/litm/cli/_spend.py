"""``litm spend status|history|set-limit|reset|release|check``: read and administer a spend ledger.

``LEDGER`` is an SQLite file path or a ``redis://`` URL (``--namespace`` picks the Redis namespace).
Each command is one call of the Python API: ``ledger.status()``, ``ledger.history()``,
``ledger.set_limit()`` / ``ledger.remove_limit()``, ``ledger.reset()`` and ``SpendCap.release()``.
Amounts print as dollars; ``--json`` prints integer micro-dollars (exact) as well. Only ``set-limit``
creates an SQLite ledger that does not exist; every other command refuses a missing file (exit 2).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from enum import StrEnum

import typer

from litm.cli import app
from litm.errors import CorruptLedgerError
from litm.spend import Ledger, SpendCap, SQLiteLedger, open_ledger, parse_usd
from litm.spend._money import format_usd
from litm.spend._scopes import check_scope

spend_app = typer.Typer(help="Read and administer a spend ledger (SQLite path or redis:// URL).", no_args_is_help=True)
app.add_typer(spend_app, name="spend")

_LEDGER = typer.Argument(..., help="SQLite file path, or redis://HOST:PORT/DB URL.")
_NAMESPACE = typer.Option("default", "--namespace", help="Redis namespace (the {tag} of every key).")
_JSON = typer.Option(False, "--json", help="JSON output (amounts in integer micro-dollars).")


class WindowOpt(StrEnum):
    total = "total"
    daily = "daily"
    monthly = "monthly"


def _open(spec: str, namespace: str, *, create: bool = False) -> Ledger:
    # A command that reads (or clears, or releases) must not leave a new empty ledger behind a typo.
    return open_ledger(spec, namespace=namespace, create=create)


def _table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    for line in [headers, *rows]:
        typer.echo("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in
                             enumerate(zip(line, widths, strict=True))).rstrip())  # fmt: skip


def _dump(data: object) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


@spend_app.command("status")
def status_cmd(
    ledger: str = _LEDGER,
    scope: list[str] = typer.Option(None, "--scope", "-s", help="Only these scopes (repeatable)."),
    namespace: str = _NAMESPACE,
    as_json: bool = _JSON,
) -> None:
    """Limit, settled, held and available spend of every scope's current window.

    Example: litm spend status spend.db --scope project:acme
    """
    led = _open(ledger, namespace)
    rows = led.status(scope or None)
    if as_json:
        _dump([{"scope": c.scope, "window": c.window, "window_id": c.wid, "limit": c.limit, "settled": c.settled,
                "held": c.held, "available": c.available} for c in rows])  # fmt: skip
        return
    _table(["scope", "window", "limit", "settled", "held", "available"],
           [[c.scope, f"{c.window} {c.wid}" if c.window != "total" else "total", format_usd(c.limit),
             format_usd(c.settled), format_usd(c.held), format_usd(c.available)] for c in rows])  # fmt: skip


@spend_app.command("history")
def history_cmd(
    ledger: str = _LEDGER,
    scope: str | None = typer.Option(None, "--scope", "-s", help="Only events touching this scope."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="How many events, newest first."),
    namespace: str = _NAMESPACE,
    as_json: bool = _JSON,
) -> None:
    """The latest ledger events (reserve, settle, refund, expire, limit, reset), newest first."""
    events = _open(ledger, namespace).history(scope, limit)
    if as_json:
        _dump([{"seq": e.seq, "ts": e.ts, "kind": e.kind, "key": e.key, "detail": e.detail,
                "deltas": [{"counter": c, "held": h, "settled": s} for c, h, s in e.deltas]}
               for e in events])  # fmt: skip
        return
    rows = []
    for e in events:
        when = datetime.fromtimestamp(e.ts, UTC).strftime("%Y-%m-%d %H:%M:%S")
        d_held, d_settled = (e.deltas[0][1], e.deltas[0][2]) if e.deltas else (0, 0)
        rows.append([when, e.kind, e.key, format_usd(d_held), format_usd(d_settled), str(len(e.deltas)), e.detail])
    _table(["time (UTC)", "kind", "key", "held", "settled", "counters", "detail"], rows)


@spend_app.command("set-limit")
def set_limit_cmd(
    ledger: str = _LEDGER,
    scope: str = typer.Argument(..., help="Scope name, e.g. project:acme."),
    amount: str = typer.Argument(..., help="Dollars, e.g. 100 or 12.50 (ignored with --remove)."),
    window: WindowOpt = typer.Option(WindowOpt.total, "--window", "-w", help="total, daily or monthly (UTC)."),
    remove: bool = typer.Option(False, "--remove", help="Remove this limit instead (the scope then refuses calls)."),
    namespace: str = _NAMESPACE,
) -> None:
    """Set (or remove) a scope's limit for one window.

    Example: litm spend set-limit spend.db project:acme 100 --window monthly
    """
    if remove:
        gone = _open(ledger, namespace).remove_limit(scope, window.value)
        typer.echo(f"{'removed' if gone else 'no'} {window.value} limit of {scope}")
        return
    # Both checked before the ledger is opened: a bad amount or scope creates nothing.
    micros = parse_usd(amount, what="limit")
    check_scope(scope)
    led = _open(ledger, namespace, create=True)
    led.set_limit(scope, window.value, micros)
    typer.echo(f"{scope} {window.value} limit = {format_usd(micros)}")


@spend_app.command("reset")
def reset_cmd(
    ledger: str = _LEDGER,
    scope: str = typer.Argument(..., help="Scope name."),
    window: WindowOpt = typer.Option(WindowOpt.total, "--window", "-w", help="total, daily or monthly (UTC)."),
    yes: bool = typer.Option(False, "--yes", help="Do it (without --yes, only say what would be cleared)."),
    namespace: str = _NAMESPACE,
) -> None:
    """Zero a scope's settled spend in its current window (held amounts stay; logged as an event)."""
    led = _open(ledger, namespace)
    if not yes:
        current = [c for c in led.status([scope]) if c.window == window.value]
        settled = current[0].settled if current else 0
        typer.echo(f"would clear {format_usd(settled)} settled in {scope} {window.value}; add --yes to do it")
        return
    cleared = led.reset(scope, window.value)
    typer.echo(f"cleared {format_usd(cleared)} settled in {scope} {window.value}")


@spend_app.command("release")
def release_cmd(
    ledger: str = _LEDGER,
    key: str = typer.Argument(..., help="The reservation key (ReserveUncertainError.key names it)."),
    namespace: str = _NAMESPACE,
) -> None:
    """Release the hold KEY of a call that was never sent (after a reserve that timed out); logged.

    Example: litm spend release spend.db run-7:step-3
    """
    outcome = SpendCap(_open(ledger, namespace)).release(key)
    if outcome is None:
        typer.echo(f"{key} was never booked: nothing to release")
    elif outcome.replayed:
        typer.echo(f"{key} was already {outcome.state} at {format_usd(outcome.cost)}: nothing released")
    else:
        typer.echo(f"released {format_usd(outcome.refunded)} held by {key}")


@spend_app.command("check")
def check_cmd(ledger: str = _LEDGER, namespace: str = _NAMESPACE) -> None:
    """Check a ledger for damage (exit 2 naming the first problem): SQLite's integrity check, every row
    readable, counters equal to their events and to the holds on them, limits equal to their log.

    Example: litm spend check spend.db
    """
    led = _open(ledger, namespace)
    if isinstance(led, SQLiteLedger):
        led.check()
    else:
        bad = led.verify()
        if bad:
            raise CorruptLedgerError(f"{ledger}: counter {bad[0].counter} differs from the sum of its events")
    typer.echo(f"ok: {ledger} is consistent")
