"""``litm chart``: the before/after picture from a measured profile, as a table, a PNG and an offline HTML page
(drawn by :mod:`litm.probe._chart`).

With no argument it charts the profile litm ships: the committed Gemma 3 270M benchmark's accuracy in each
of 10 slots (measured, with Wilson intervals). ``litm chart PROFILE`` charts a profile written by
``litm probe`` or ``litm bench``; ``--builtin pyramid`` charts a built-in shape, labelled as assumed.
"""

from __future__ import annotations

from pathlib import Path

import typer

from litm.cli import app
from litm.cli._options import check_strategy
from litm.placement import PositionProfile
from litm.placement._registry import DEFAULT_STRATEGY
from litm.probe._chart import bundled_profile, write_chart
from litm.rag import rank_chart


@app.command("chart")
def chart_cmd(
    profile: Path | None = typer.Argument(None, help="A profile JSON (default: the committed Gemma 3 270M one)."),
    builtin: str | None = typer.Option(None, "--builtin", help="A built-in shape instead (edges, pyramid, ...)."),
    n: int = typer.Option(10, "--n", "-n", min=1, help="How many ranked documents."),
    strategy: str = typer.Option(DEFAULT_STRATEGY, "--strategy", "-s", callback=check_strategy, help="Placement."),
    out: Path = typer.Option(Path("litm-out/chart"), "--out", "-o", help="Folder for chart.png and chart.html."),
) -> None:
    """Chart the accuracy of the slot each rank lands in, before (rank order) and after placement.

    Example: litm chart litm-out/probe/profile.json --n 10 --strategy pyramid
    """
    if builtin is not None and profile is not None:
        raise typer.BadParameter("give a profile file or --builtin, not both")
    if builtin is not None:
        prof, measured = PositionProfile.builtin(builtin), False
    else:
        prof, measured = (bundled_profile() if profile is None else PositionProfile.load(profile)), None
    chart = rank_chart(prof, n, strategy, measured=measured)
    typer.echo(chart.table())
    png, page = write_chart(chart, out)
    typer.echo(f"wrote {png} and {page}")
