"""``--config FILE.toml`` for the commands with many options (``probe``, ``bench``, ``prompt``).

The file's keys are the Python API's parameter names (``lengths``, ``target_half_width``, ``n_threads``), not
the flags, so one file serves ``litm probe --config`` and a script that calls the library. An option given on
the command line overrides the file; an option given nowhere keeps the command's default. A key the command
does not take, or a value of the wrong type, is a :class:`~litm.errors.CommandConfigError` naming the file
and the key: never ignored, never coerced.

Each command declares its keys as a :class:`Key` table: the Python name, the command's parameter it
overrides, and the TOML types it accepts.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import typer

from litm.errors import CommandConfigError

__all__ = ["PANEL_CONFIG", "Key", "config_option", "read_config", "with_config"]

#: The help panel of ``--config`` itself.
PANEL_CONFIG = "Configuration file"

_KINDS = ("int", "float", "bool", "str", "list[int]", "list[float]", "list[str]")
_SAY = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "str": "a string",
    "list[int]": "a list of integers",
    "list[float]": "a list of numbers",
    "list[str]": "a list of strings",
}


@dataclass(frozen=True)
class Key:
    """A key of a command's config file: ``param`` is the command's parameter it overrides (the Python name
    of the command function's argument), ``kinds`` the TOML types it accepts (``"int"``, ``"list[str]"``...);
    ``low`` / ``high`` bound a number and ``choices`` a string, as the option's own checks do."""

    param: str
    kinds: tuple[str, ...]
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = [k for k in self.kinds if k not in _KINDS]
        if unknown or not self.kinds:
            raise ValueError(f"config key kinds must be among {_KINDS}, got {self.kinds}")

    def problem(self, value: object) -> str | None:
        """Why ``value`` (of one of the kinds) is out of range, or None."""
        if isinstance(value, int | float) and not isinstance(value, bool):
            if self.low is not None and value < self.low:
                return f"at least {self.low:g}"
            if self.high is not None and value > self.high:
                return f"at most {self.high:g}"
        if self.choices and isinstance(value, str) and value not in self.choices:
            return f"one of {', '.join(self.choices)}"
        return None


def config_option(page: str) -> Path | None:
    """The ``--config`` option (its default, for a command's signature); ``page`` documents the keys."""
    value: Path | None = typer.Option(
        None,
        "--config",
        help=f"TOML file of options, keyed by the Python API's names ({page}); flags override it.",
        rich_help_panel=PANEL_CONFIG,
        dir_okay=False,
    )
    return value


def _is(value: object, kind: str) -> bool:
    if kind.startswith("list["):
        return isinstance(value, list) and all(_is(v, kind[5:-1]) for v in value)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    return isinstance(value, str)


def read_config(path: Path, keys: Mapping[str, Key]) -> dict[str, object]:
    """The checked keys of the TOML file at ``path`` (a float key given as an integer reads as a float).

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "probe.toml"
    >>> _ = f.write_text('trials = 4\\nlengths = [256, 1024]\\n')
    >>> keys = {"trials": Key("trials", ("int",)), "lengths": Key("lengths", ("list[int]", "str"))}
    >>> read_config(f, keys)
    {'trials': 4, 'lengths': [256, 1024]}
    >>> _ = f.write_text('trails = 4\\n')
    >>> read_config(f, keys)
    Traceback (most recent call last):
    ...
    litm.errors.CommandConfigError: ...probe.toml: unknown key 'trails'; the keys are lengths, trials
    """
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CommandConfigError(f"cannot read --config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CommandConfigError(f"--config {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise CommandConfigError(f"--config {path} is not valid TOML: {exc}") from None
    out: dict[str, object] = {}
    for name, value in doc.items():
        key = keys.get(name)
        if key is None:
            raise CommandConfigError(f"{path}: unknown key {name!r}; the keys are {', '.join(sorted(keys))}")
        if not any(_is(value, kind) for kind in key.kinds):
            expected = " or ".join(_SAY[k] for k in key.kinds)
            raise CommandConfigError(f"{path}: {name} must be {expected}, got {value!r}")
        bound = key.problem(value)
        if bound is not None:
            raise CommandConfigError(f"{path}: {name} must be {bound}, got {value!r}")
        out[name] = float(value) if key.kinds == ("float",) and isinstance(value, int) else value
    return out


def _given(ctx: typer.Context, param: str) -> bool:
    """Whether the user set ``param`` on the command line (or by its environment variable)."""
    source = ctx.get_parameter_source(param)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT")


def with_config(ctx: typer.Context, path: Path | None, keys: Mapping[str, Key], values: dict[str, object]) -> (
    dict[str, object]
):  # fmt: skip
    """``values`` (the command's options, by Python name) with the file's keys for the options the command
    line left unset."""
    if path is None:
        return values
    merged = dict(values)
    for name, value in read_config(path, keys).items():
        key = keys[name]
        if not _given(ctx, key.param):
            merged[name] = value
    return merged
