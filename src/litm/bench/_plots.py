"""PNG plots of a strategy benchmark, drawn from its summary (matplotlib, Agg backend, imported lazily).

* ``bench-k{k}-accuracy.png``: accuracy by final slot (95% Wilson band, closed-book and oracle levels)
  beside each strategy's accuracy by gold retrieval rank.
* ``bench-k{k}-placement.png``: the before/after placement chart: for each retrieval rank, the position
  weight (measured slot accuracy) of the slot it gets in rank order and after placement.
* ``bench-k{k}-headline.png``: fraction of the worst-to-best slot gap each strategy recovers.
* ``bench-k{k}-ablation.png``: plain vs anchored prompts, question after vs before-and-after.

Example:
    >>> write_plots(summary, "out/")  # doctest: +SKIP
    [PosixPath('out/bench-k10-accuracy.png'), ...]
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from litm.bench._analysis import best_fixed
from litm.bench._design import arrangement
from litm.eval._plots import pyplot
from litm.placement import PositionProfile

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["write_plots"]

_DPI = 96


def _offset(j: int, groups: int, width: float) -> float:
    """Where bar group ``j`` of ``groups`` sits around its tick."""
    return (j - (groups - 1) / 2) * width


def _save(plt: ModuleType, fig: Figure, ax: Axes, path: Path) -> Path:
    """The finish every bar chart shares: legend, horizontal grid, tight layout, PNG, figure closed."""
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _accuracy(s: Mapping[str, Any], k: int, path: Path, model: str) -> Path:
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.0), dpi=_DPI, sharey=True)
    xs = list(range(1, k + 1))
    slots = s["slot_accuracy"]
    a1.plot(xs, [c["acc"] for c in slots], marker="o", color="black", label="gold passage in slot")
    a1.fill_between(xs, [c["lo"] for c in slots], [c["hi"] for c in slots], color="grey", alpha=0.2, linewidth=0)
    for name, style in (("oracle", ":"), ("closed_book", "--")):
        c = s.get(name) or {}
        if c.get("n"):
            a1.axhline(c["acc"], color="tab:blue", linestyle=style, linewidth=1, label=name.replace("_", "-"))
    a1.set_xlabel("final slot of the gold passage (1 = first, k = next to the question)")
    a1.set_ylabel("accuracy (first-line match)")
    a1.set_title(f"accuracy by slot, {s['questions']} questions, 95% Wilson band", fontsize=10)
    a1.legend(fontsize=8)
    for name, cells in s["derived"].items():
        if cells and cells[0]["n"]:
            a2.plot(xs, [c["acc"] for c in cells], marker="o", markersize=3, label=name)
    a2.set_xlabel("retrieval rank of the gold passage")
    a2.set_title("accuracy by gold rank after each strategy places the documents", fontsize=10)
    a2.legend(fontsize=8, ncol=2)
    for ax in (a1, a2):
        ax.set_xticks(xs)
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
    fig.suptitle(f"{model}: k={k}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _placement(s: Mapping[str, Any], k: int, path: Path, model: str) -> Path:
    plt = pyplot()
    weights = [c["acc"] for c in s["slot_accuracy"]]
    measured = PositionProfile.from_weights(weights, name="measured")
    shown = ["none"] + [n for n in (best_fixed(s["headline"].get("decaying", {})),) if n] + ["profile"]
    fig, ax = plt.subplots(figsize=(8.5, 4.0), dpi=_DPI)
    width = 0.8 / len(shown)
    for j, name in enumerate(shown):
        order = arrangement(name, k, profile=measured if name == "profile" else None)
        got = [weights[order.index(r)] for r in range(1, k + 1)]
        label = {"none": "before (rank order)", "profile": "after: profile (pooled measured profile)"}.get(
            name, f"after: {name}"
        )
        ax.bar([r + _offset(j, len(shown), width) for r in range(1, k + 1)], got, width, label=label)
    ax.set_xticks(range(1, k + 1))
    ax.set_xlabel("retrieval rank of the document (1 = best)")
    ax.set_ylabel("position weight = measured accuracy of its slot")
    ax.set_ylim(0, 1.03)
    ax.set_title(f"{model}, k={k}: where each rank lands, weighted by the measured slot accuracy", fontsize=10)
    return _save(plt, fig, ax, path)


def _headline(s: Mapping[str, Any], k: int, path: Path, model: str) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 3.6), dpi=_DPI)
    dists = list(s["headline"])
    names = [n for n in s["derived"] if any(n in s["headline"][d] for d in dists)]
    width = 0.8 / max(len(dists), 1)
    for j, d in enumerate(dists):
        vals = [s["headline"][d].get(n, {}).get("gap_recovered", float("nan")) for n in names]
        ax.bar([i + _offset(j, len(dists), width) for i in range(len(names))], vals, width, label=f"{d} gold rank")
    ax.set_xticks(range(len(names)), names)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_ylabel("gap recovered (0 = worst slot, 1 = best)")
    ax.set_title(f"{model}, k={k}: fraction of the worst-to-best slot gap recovered", fontsize=10)
    return _save(plt, fig, ax, path)


def _ablation(s: Mapping[str, Any], k: int, path: Path, model: str) -> Path:
    plt = pyplot()
    arms = s["ablation"]
    slots = sorted({int(x) for v in arms.values() for x in v})
    fig, ax = plt.subplots(figsize=(7.5, 3.6), dpi=_DPI)
    width = 0.8 / max(len(arms), 1)
    for j, (arm, cells) in enumerate(arms.items()):
        xs = [i + _offset(j, len(arms), width) for i in range(len(slots))]
        accs = [cells.get(str(sl), {}).get("acc", 0.0) for sl in slots]
        err_lo = [a - cells.get(str(sl), {}).get("lo", a) for a, sl in zip(accs, slots, strict=True)]
        err_hi = [cells.get(str(sl), {}).get("hi", a) - a for a, sl in zip(accs, slots, strict=True)]
        ax.bar(xs, accs, width, yerr=[err_lo, err_hi], capsize=2, label=arm)
    n = next((c["n"] for v in arms.values() for c in v.values()), 0)
    ax.set_xticks(range(len(slots)), [f"slot {sl}" for sl in slots])
    ax.set_ylim(0, 1.03)
    ax.set_ylabel("accuracy")
    ax.set_title(f"{model}, k={k}: prompt formatting ablation ({n} questions per bar)", fontsize=10)
    return _save(plt, fig, ax, path)


def write_plots(summary: Mapping[str, Any], out_dir: str | Path) -> list[Path]:
    """Every plot for every ``k`` with finished questions; returns the written paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model = str((summary.get("model") or {}).get("name", ""))
    paths: list[Path] = []
    for key, s in summary["by_k"].items():
        if not s["questions"]:
            continue
        k = int(key)
        paths.append(_accuracy(s, k, out / f"bench-k{k}-accuracy.png", model))
        paths.append(_placement(s, k, out / f"bench-k{k}-placement.png", model))
        paths.append(_headline(s, k, out / f"bench-k{k}-headline.png", model))
        if s["ablation"]:
            paths.append(_ablation(s, k, out / f"bench-k{k}-ablation.png", model))
    return paths
