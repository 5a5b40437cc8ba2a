"""Prometheus metrics of one gateway (``GET /metrics``, behind the admin key).

Counters: requests by route and status, refusals by reason, prompt tokens admitted (the count's bound) and
micro-dollars held and settled, by model. Histograms: ledger latency by operation (``reserve``, ``settle``)
and upstream latency (to the answer's headers) by upstream. With several workers every process writes its
values to ``PROMETHEUS_MULTIPROC_DIR`` (``litm serve`` makes a fresh one) and ``/metrics`` sums them.

Each app has its own registry, so apps built in one process (tests) never collide.

>>> m = Metrics()
>>> m.refused("/v1/messages", 402, "budget_exceeded")
>>> b"litm_gateway_refusals_total" in m.render()
True
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["Metrics"]

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """The gateway's metrics, registered in a registry of their own."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("litm_gateway_requests", "Requests answered, by route and status.",
                                ["route", "status"], registry=r)  # fmt: skip
        self.refusals = Counter("litm_gateway_refusals", "Requests the gateway refused itself, by reason.",
                                ["reason"], registry=r)  # fmt: skip
        self.tokens = Counter("litm_gateway_input_tokens", "Prompt tokens admitted (the count's upper bound).",
                              ["model"], registry=r)  # fmt: skip
        self.held = Counter("litm_gateway_held_micros", "Micro-dollars reserved before upstream calls.",
                            ["model"], registry=r)  # fmt: skip
        self.settled = Counter("litm_gateway_settled_micros", "Micro-dollars settled (charged) after calls.",
                               ["model"], registry=r)  # fmt: skip
        self.ledger = Histogram("litm_gateway_ledger_seconds", "Ledger operation latency.", ["op"],
                                buckets=_LATENCY_BUCKETS, registry=r)  # fmt: skip
        self.upstream = Histogram("litm_gateway_upstream_seconds", "Upstream latency to the answer's headers.",
                                  ["upstream"], buckets=_LATENCY_BUCKETS, registry=r)  # fmt: skip
        # Each metric's child per label values, looked up once: labels() takes a lock and builds a key on
        # every call, several times per request.
        self._children: dict[tuple[object, tuple[str, ...]], Any] = {}

    def _child(self, metric: Any, *values: str) -> Any:
        key = (metric, values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def refused(self, route: str, status: int, reason: str) -> None:
        self._child(self.requests, route, str(status)).inc()
        self._child(self.refusals, reason).inc()

    def answered(self, route: str, status: int) -> None:
        self._child(self.requests, route, str(status)).inc()

    def observe_upstream(self, upstream: str, seconds: float) -> None:
        self._child(self.upstream, upstream).observe(seconds)

    def admitted(self, model: str, tokens: int, held: int, reserve_s: float) -> None:
        self._child(self.tokens, model).inc(tokens)
        self._child(self.held, model).inc(held)
        self._child(self.ledger, "reserve").observe(reserve_s)

    def booked(self, model: str, cost: int, settle_s: float) -> None:
        self._child(self.settled, model).inc(cost)
        self._child(self.ledger, "settle").observe(settle_s)

    def render(self) -> bytes:
        """The exposition text: this process's values, or every worker's in multiprocess mode."""
        from prometheus_client import CollectorRegistry, generate_latest

        folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        if not folder:
            return bytes(generate_latest(self.registry))
        from prometheus_client import multiprocess

        merged = CollectorRegistry()
        multiprocess.MultiProcessCollector(merged, path=folder)  # type: ignore[no-untyped-call]
        return bytes(generate_latest(merged))


def content_type() -> str:
    from prometheus_client import CONTENT_TYPE_LATEST

    return str(CONTENT_TYPE_LATEST)
