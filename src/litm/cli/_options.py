"""Command-line options shared by several commands, defined once.

Choice lists come from the library (formats, languages, question positions, anchor styles, what a
header's score shows), so the CLI offers exactly what Python accepts. Strategy names are checked when
the command runs, against the registry with plugins loaded, rather than frozen into an enum at import:
a strategy a third-party package publishes under the ``litm.strategies`` entry point is selectable like
a built-in one.
"""

from __future__ import annotations

from enum import Enum, StrEnum

import typer

from litm.placement import strategy_names
from litm.prompt import FORMATS, LANGS, QUESTION_POSITIONS, SCORE_AS, STYLES

__all__ = [
    "DedupOpt",
    "FormatOpt",
    "LangOpt",
    "QuestionPosOpt",
    "RankByOpt",
    "ScoreAsOpt",
    "StyleOpt",
    "check_strategy",
]

FormatOpt = Enum("FormatOpt", {n: n for n in FORMATS}, type=str)  # type: ignore[misc]
LangOpt = Enum("LangOpt", {n: n for n in LANGS}, type=str)  # type: ignore[misc]
QuestionPosOpt = Enum("QuestionPosOpt", {n: n for n in QUESTION_POSITIONS}, type=str)  # type: ignore[misc]
StyleOpt = Enum("StyleOpt", {n: n for n in STYLES}, type=str)  # type: ignore[misc]
ScoreAsOpt = Enum("ScoreAsOpt", {n: n for n in SCORE_AS}, type=str)  # type: ignore[misc]


class RankByOpt(StrEnum):
    input = "input"
    score = "score"


class DedupOpt(StrEnum):
    id = "id"
    content = "content"


def check_strategy(value: str | None) -> str | None:
    """A ``--strategy`` callback: the name if it is registered (plugins included), else a usage error."""
    if value is None:
        return None
    names = strategy_names()
    if value not in names:
        raise typer.BadParameter(f"{value!r} is not a placement strategy; choose from {', '.join(names)}")
    return value
