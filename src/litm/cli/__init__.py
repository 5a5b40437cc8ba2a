"""The ``litm`` command line: a thin layer over the library.

Each command lives in its own module and registers itself on :data:`app`. Every error a user can
cause (a :class:`~litm.errors.LitmError`) ends the process with exit code 2 and one line on stderr.
"""

from __future__ import annotations

import sys

import typer

from litm._version import __version__
from litm.errors import LitmError

app = typer.Typer(
    name="litm",
    help="Measure and beat the Lost-in-the-Middle effect in LLM and RAG prompts.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain click errors: a bad option is reported in one line, like every other input error.
    rich_markup_mode=None,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"litm {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Measure and beat the Lost-in-the-Middle effect in LLM and RAG prompts."""


# Command modules register themselves on import; keep one line per module.
from litm.cli import bench as _bench  # noqa: E402,F401
from litm.cli import chart as _chart  # noqa: E402,F401
from litm.cli import code as _code  # noqa: E402,F401
from litm.cli import demo as _demo  # noqa: E402,F401
from litm.cli import fit as _fit  # noqa: E402,F401
from litm.cli import index as _index  # noqa: E402,F401
from litm.cli import models as _models  # noqa: E402,F401
from litm.cli import place as _place  # noqa: E402,F401
from litm.cli import probe as _probe  # noqa: E402,F401
from litm.cli import prompt as _prompt  # noqa: E402,F401
from litm.cli import rag as _rag  # noqa: E402,F401
from litm.cli import report as _report  # noqa: E402,F401
from litm.cli import serve as _serve  # noqa: E402,F401
from litm.cli import spend as _spend  # noqa: E402,F401


def fail(message: str) -> typer.Exit:
    """Print a one-line error and return the exit to raise (code 2, like a usage error)."""
    typer.echo(f"litm: error: {message}", err=True)
    return typer.Exit(code=2)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except LitmError as exc:
        typer.echo(f"litm: error: {exc}", err=True)
        sys.exit(2)
