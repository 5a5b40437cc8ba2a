"""Option groups in ``--help`` for the commands with many options.

Typer draws ``rich_help_panel`` groups only with rich markup, which the CLI turns off (one-line errors,
plain help). These classes draw the same groups in plain help: one section per panel, in the order the
options are declared, so ``litm probe -h`` reads as "Model", "Grid", "Output"... rather than 34 lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    # Typer 0.29 carries its own copy of click (earlier versions use click itself): the types come from Typer.
    from typer._click import Command, Context, HelpFormatter

__all__ = ["PanelCommand", "PanelGroup"]


def _format_panels(command: Command, ctx: Context, formatter: HelpFormatter) -> None:
    arguments: list[tuple[str, str]] = []
    panels: dict[str, list[tuple[str, str]]] = {}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        if param.param_type_name == "argument":
            arguments.append(record)
        else:
            panel = getattr(param, "rich_help_panel", None) or "Options"
            panels.setdefault(panel, []).append(record)
    if arguments:
        with formatter.section("Arguments"):
            formatter.write_dl(arguments)
    for panel, records in panels.items():
        with formatter.section(panel):
            formatter.write_dl(records)


class PanelCommand(TyperCommand):
    """A command whose plain help groups options by their ``rich_help_panel``."""

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        _format_panels(self, ctx, formatter)


class PanelGroup(TyperGroup):
    """A command group (a command with subcommands, like ``litm probe``) whose options are grouped by panel."""

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        _format_panels(self, ctx, formatter)
        self.format_commands(ctx, formatter)
