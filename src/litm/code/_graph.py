"""Rank the pieces around a target by a personalised PageRank over their reference graph.

The idea is aider's repo map (a PageRank over who-references-whom, personalised towards the files in the
chat); this is litm's own small implementation. Nodes are the target, its callers and its callees; an
edge's weight is the number of call sites between two nodes, counted in either direction (the walk has
to reach callers from the target, and callers point *at* the target). Every restart jumps back to the
target, so a caller with three call sites outranks one with a single site, and a caller that also calls
the target's other callees (it shares their context) outranks an isolated one.

Example:
    >>> s = personalized_pagerank(["t", "a", "b"], {("a", "t"): 3.0, ("b", "t"): 1.0}, source="t")
    >>> s["a"] > s["b"], round(sum(s.values()), 6)
    (True, 1.0)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

__all__ = ["personalized_pagerank"]

K = TypeVar("K", bound=Hashable)


def personalized_pagerank(
    nodes: Sequence[K],
    edges: Mapping[tuple[K, K], float],
    *,
    source: K,
    damping: float = 0.85,
    tol: float = 1e-12,
    max_iter: int = 200,
) -> dict[K, float]:
    """Stationary visit probabilities of a walk that follows weighted edges and restarts at ``source``.

    ``edges`` are read as undirected (``(a, b)`` and ``(b, a)`` add up); self-loops and non-positive
    weights are ignored. A node without edges sends its probability back to ``source``. The scores sum to 1.
    """
    if source not in nodes:
        raise ValueError("the source must be one of the nodes")
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping!r}")
    adj: dict[K, dict[K, float]] = defaultdict(dict)
    for (a, b), w in edges.items():
        if a == b or w <= 0 or a not in nodes or b not in nodes:
            continue
        adj[a][b] = adj[a].get(b, 0.0) + w
        adj[b][a] = adj[b].get(a, 0.0) + w
    out_weight = {n: sum(adj[n].values()) for n in nodes}
    score = {n: (1.0 if n == source else 0.0) for n in nodes}
    for _ in range(max_iter):
        nxt = dict.fromkeys(nodes, 0.0)
        leaked = 0.0
        for n, mass in score.items():
            if out_weight[n] == 0.0:
                leaked += mass
                continue
            for m, w in adj[n].items():
                # The share first: with subnormal weights, damping * mass * w would round before the division.
                nxt[m] += damping * mass * (w / out_weight[n])
            leaked += (1.0 - damping) * mass
        nxt[source] += leaked
        delta = sum(abs(nxt[n] - score[n]) for n in nodes)
        score = nxt
        if delta < tol:
            break
    return score
