"""The SQLite ledger's tables, triggers and row format (see :mod:`litm.spend._ledger.sqlite` for the rules).

``ops`` is the append-only event log (triggers refuse UPDATE and DELETE); a trigger on its insert moves
the counters each event names, so the counters equal the event sums by construction. ``reservations``
keeps one row per key (its chain and booked counters as JSON lists); ``limits`` one row per scope and
window.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from litm.spend._ledger.base import ReservationRecord

__all__ = ["MOVE_COUNTERS", "RES_COLS", "SCHEMA", "names_json", "record"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS limits (
  scope TEXT NOT NULL, window TEXT NOT NULL, micros INTEGER NOT NULL CHECK (micros >= 0),
  PRIMARY KEY (scope, window)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counters (
  name TEXT PRIMARY KEY, scope TEXT NOT NULL, window TEXT NOT NULL, wid TEXT NOT NULL,
  settled INTEGER NOT NULL DEFAULT 0, held INTEGER NOT NULL DEFAULT 0 CHECK (held >= 0)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS counters_scope ON counters (scope, window, wid);
CREATE TABLE IF NOT EXISTS reservations (
  key TEXT PRIMARY KEY, chain TEXT NOT NULL, counters TEXT NOT NULL, amount INTEGER NOT NULL,
  created REAL NOT NULL, deadline REAL NOT NULL, price_version TEXT NOT NULL, model TEXT NOT NULL,
  provider TEXT NOT NULL, state TEXT NOT NULL, charged INTEGER NOT NULL DEFAULT 0,
  over_hold INTEGER NOT NULL DEFAULT 0, late INTEGER NOT NULL DEFAULT 0, closed REAL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS reservations_lease ON reservations (deadline) WHERE state = 'held';
CREATE TABLE IF NOT EXISTS ops (
  seq INTEGER PRIMARY KEY, ts REAL NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, counters TEXT NOT NULL,
  d_held INTEGER NOT NULL, d_settled INTEGER NOT NULL, detail TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS ops_no_update BEFORE UPDATE ON ops BEGIN SELECT RAISE(ABORT, 'ops are append-only'); END;
CREATE TRIGGER IF NOT EXISTS ops_no_delete BEFORE DELETE ON ops BEGIN SELECT RAISE(ABORT, 'ops are append-only'); END;
"""
# Every event moves the counters it names, inside SQLite, in the statement that appends it: the counters
# that exist are updated (the CHECK on held applies), a window's first event creates its counters.
MOVE_COUNTERS = """
CREATE TRIGGER IF NOT EXISTS ops_move_counters AFTER INSERT ON ops BEGIN
  UPDATE counters SET settled = settled + NEW.d_settled, held = held + NEW.d_held
  WHERE name IN (SELECT value FROM json_each(NEW.counters));
  INSERT INTO counters (name, scope, window, wid, settled, held)
  SELECT j.value, substr(j.value, 1, instr(j.value, '|') - 1),
         substr(j.value, instr(j.value, '|') + 1, instr(substr(j.value, instr(j.value, '|') + 1), '|') - 1),
         substr(substr(j.value, instr(j.value, '|') + 1), instr(substr(j.value, instr(j.value, '|') + 1), '|') + 1),
         NEW.d_settled, NEW.d_held
  FROM json_each(NEW.counters) j WHERE NOT EXISTS (SELECT 1 FROM counters c WHERE c.name = j.value);
END
"""
RES_COLS = (
    "key, chain, counters, amount, created, deadline, price_version, model, provider, state, charged, over_hold, late"
)


@functools.lru_cache(maxsize=256)
def names_json(names: tuple[str, ...]) -> str:
    """A chain or a counter list as stored (cached: every reserve of a chain writes the same text)."""
    return json.dumps(list(names))


def record(row: Sequence[Any]) -> ReservationRecord:
    """A ``reservations`` row (the columns of :data:`RES_COLS`, in order) as a record."""
    return ReservationRecord(
        key=row[0], chain=tuple(json.loads(row[1])), counters=tuple(json.loads(row[2])), amount=row[3],
        created=row[4], deadline=row[5], price_version=row[6], model=row[7], provider=row[8], state=row[9],
        charged=row[10], over_hold=bool(row[11]), late=bool(row[12]),
    )  # fmt: skip
