"""The ``litm`` command line: a thin layer over the library.

Each command lives in its own private module (``_probe.py``) and registers itself on :data:`app`. Every error a user can
cause (a :class:`~litm.errors.LitmError`) ends the process with exit code 2 and one line on stderr.
"""

from __future__ import annotations

import sys

import typer

from litm._version import __version__
from litm.errors import InvalidOptionError, LitmError

__all__ = ["app", "main"]

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


# Command modules register themselves on import; one line per module.
from litm.cli import (  # noqa: E402
    _bench,  # noqa: F401
    _chart,  # noqa: F401
    _code,  # noqa: F401
    _compress,  # noqa: F401
    _demo,  # noqa: F401
    _fit,  # noqa: F401
    _index,  # noqa: F401
    _models,  # noqa: F401
    _place,  # noqa: F401
    _probe,  # noqa: F401
    _prompt,  # noqa: F401
    _rag,  # noqa: F401
    _report,  # noqa: F401
    _serve,  # noqa: F401
    _spend,  # noqa: F401
)


def _one_line(message: str) -> str:
    """``message`` on one line: a value quoted in it (a file name, a question) may hold line breaks."""
    return message.strip().replace("\r", "\\r").replace("\n", "\\n")


def fail(message: str) -> typer.Exit:
    """Print a one-line error and return the exit to raise (code 2, like a usage error)."""
    typer.echo(f"litm: error: {_one_line(message)}", err=True)
    return typer.Exit(code=2)


def _is_text(arg: str) -> bool:
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _click_message(exc: Exception) -> str | None:
    """The one-line message of a click error (a bad option, a missing argument), or None for any other error.

    Told apart by shape rather than class, because Typer raises its own copy of click's exceptions.
    """
    format_message = getattr(exc, "format_message", None)
    if not callable(format_message) or not hasattr(exc, "exit_code"):
        return None
    ctx = getattr(exc, "ctx", None)
    hint = f" (see '{ctx.command_path} -h')" if ctx is not None and getattr(exc, "cmd", None) is not None else ""
    return f"{format_message()}{hint}"


def main() -> None:
    """Console-script entry point: every error a user can cause is one ``litm: error:`` line and exit code 2.

    Click's own report of a bad option (a usage block, a hint and the error over four lines) is folded into
    that one line too, so a caller can rely on one line whatever went wrong.
    """
    bad = next((i for i, arg in enumerate(sys.argv[1:], start=1) if not _is_text(arg)), None)
    try:
        if bad is not None:
            # Bytes that are not UTF-8 reach Python as lone surrogates, which no output of litm can hold.
            raise InvalidOptionError(f"argument {bad} is not UTF-8 text: {sys.argv[bad]!a}")
        code = app(standalone_mode=False)
    except typer.Abort:
        message = "aborted"
    except LitmError as exc:
        message = str(exc)
    except OSError as exc:  # a path given cannot be read or written (missing folder, a file where a folder goes)
        where = f": {exc.filename}" if exc.filename is not None else ""
        message = f"{exc.strerror or exc}{where}"
    except Exception as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            typer.echo(exc.format_message())  # type: ignore[attr-defined]
            message = "no command given; the commands are listed above"
        else:
            click_message = _click_message(exc)
            if click_message is None:
                raise
            message = click_message
    else:
        if isinstance(code, int) and code:
            sys.exit(code)
        return
    typer.echo(f"litm: error: {_one_line(message)}", err=True)
    sys.exit(2)
