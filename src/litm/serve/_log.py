"""Structured logs: one JSON object per line, access lines with the request id and no prompt text.

Every record of the ``litm`` loggers (the gateway's access lines, the spend cap's warnings) goes to stderr as
JSON. What a line may hold is decided where it is written: ids, model names, counts, amounts, statuses and
durations; never a key, a provider secret, a header value or the prompt.

>>> import logging
>>> rec = logging.LogRecord("litm.serve.access", logging.INFO, __file__, 1, "request", (), None)
>>> rec.fields = {"status": 200}
>>> JsonFormatter().format(rec)[:44]
'{"level": "info", "logger": "litm.serve.acce'
"""

from __future__ import annotations

import json
import logging
import sys
import time

__all__ = ["JsonFormatter", "access", "setup_logging", "uvicorn_log_config"]

log = logging.getLogger("litm.serve.access")


class JsonFormatter(logging.Formatter):
    """A record as one JSON line: level, logger, time (UTC ISO 8601), message and the record's ``fields``."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "level": record.levelname.lower(),
            "logger": record.name,
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "msg": record.getMessage(),
        }
        out.update(getattr(record, "fields", {}))
        if record.exc_info:
            out["error"] = f"{record.exc_info[0].__name__ if record.exc_info[0] else 'error'}: {record.exc_info[1]}"
        return json.dumps(out, ensure_ascii=False, default=str)


def uvicorn_log_config(level: str) -> dict[str, object]:
    """uvicorn's own records (start, stop, worker supervision, errors) as the same JSON lines."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    quiet = {"handlers": ["stderr"], "level": level.upper(), "propagate": False}
    return {"version": 1, "disable_existing_loggers": False,
            "formatters": {"json": {"()": f"{__name__}.JsonFormatter"}}, "handlers": {"stderr": handler},
            "loggers": {"uvicorn": quiet, "uvicorn.error": {"level": level.upper()},
                        "uvicorn.access": quiet}}  # fmt: skip


def setup_logging(level: str = "info") -> None:
    """Send the ``litm`` loggers to stderr as JSON lines (once per process)."""
    root = logging.getLogger("litm")
    if any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    root.setLevel(level.upper())
    root.propagate = False


def access(**fields: object) -> None:
    """Write one access line (``fields``: request id, method, path, status, model, key id, amounts, ms)."""
    log.info("request", extra={"fields": fields})
