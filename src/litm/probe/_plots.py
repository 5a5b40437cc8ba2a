"""PNG plots of a probe: accuracy vs depth per length (Wilson bands), and a length x depth heatmap.

matplotlib is imported lazily with the Agg backend (no display needed), so ``import litm.probe`` stays
light and the probe runs without matplotlib when plots are not asked for.

Example:
    >>> paths = write_plots(analysis, "out/")  # doctest: +SKIP
    ['out/needle-accuracy.png', 'out/needle-heatmap.png']
"""

from __future__ import annotations

from pathlib import Path

from litm.eval._plots import pyplot
from litm.eval._stats import Cell
from litm.probe._analysis import TaskAnalysis

__all__ = ["plot_curves", "plot_heatmap", "write_plots"]

_DPI = 80


def plot_curves(a: TaskAnalysis, path: str | Path, *, title: str = "") -> Path:
    """Accuracy vs depth, one line per length with its 95% Wilson band; closed-book level dashed."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=_DPI)
    for i, length in enumerate(a.lengths):
        cells = [a.table.get((length, d), Cell(0, 0)) for d in a.depths]
        accs = [c.acc for c in cells]
        los = [c.ci[0] for c in cells]
        his = [c.ci[1] for c in cells]
        # A small horizontal offset per length keeps identical curves from hiding each other.
        xs = [d + (i - (len(a.lengths) - 1) / 2) * 0.006 for d in a.depths]
        (line,) = ax.plot(xs, accs, marker="o", markersize=4, label=f"{length} tokens")
        ax.fill_between(a.depths, los, his, color=line.get_color(), alpha=0.12, linewidth=0)
    if a.closed_book.n:
        ax.axhline(a.closed_book.acc, color="grey", linestyle="--", linewidth=1, label="closed-book")
    for d in a.dead_zone_pooled.depths:
        ax.axvspan(d - 0.03, d + 0.03, color="red", alpha=0.08)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("needle depth (0 = start of context, 1 = next to the question)")
    ax.set_ylabel("accuracy")
    ax.set_title(title or f"{a.task}: accuracy by depth (95% Wilson bands)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out


def plot_heatmap(a: TaskAnalysis, path: str | Path, *, title: str = "") -> Path:
    """Length x depth accuracy heatmap, each cell annotated ``hits/n``."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(a.depths), 1.2 + 0.55 * len(a.lengths)), dpi=_DPI)
    grid = [[a.table.get((length, d), Cell(0, 0)).acc for d in a.depths] for length in a.lengths]
    im = ax.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
    for i, length in enumerate(a.lengths):
        for j, d in enumerate(a.depths):
            c = a.table.get((length, d), Cell(0, 0))
            ax.text(j, i, f"{c.hits}/{c.n}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(a.depths)), [f"{d:g}" for d in a.depths])
    ax.set_yticks(range(len(a.lengths)), [str(length) for length in a.lengths])
    ax.set_xlabel("depth")
    ax.set_ylabel("context length (tokens)")
    ax.set_title(title or f"{a.task}: accuracy", fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    plt.close(fig)
    return out


def write_plots(analyses: dict[str, TaskAnalysis], out_dir: str | Path, *, model: str = "") -> list[Path]:
    """Both plots for every task with trials; returns the written paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for task, a in analyses.items():
        if not a.lengths:
            continue
        suffix = f" - {model}" if model else ""
        paths.append(plot_curves(a, out / f"{task}-accuracy.png", title=f"{task}: accuracy by depth{suffix}"))
        paths.append(plot_heatmap(a, out / f"{task}-heatmap.png", title=f"{task}: accuracy{suffix}"))
    return paths
