"""Command-line options shared by several commands, defined once.

Choice lists come from the library (formats, languages, question positions, anchor styles, what a
header's score shows), so the CLI offers exactly what Python accepts. Strategy names are checked when
the command runs, against the registry with plugins loaded, rather than frozen into an enum at import:
a strategy a third-party package publishes under the ``litm.strategies`` entry point is selectable like
a built-in one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum, StrEnum

import typer

from litm.errors import ContextBudgetExceeded
from litm.placement._registry import strategy_names
from litm.prompt._anchors import SCORE_AS, STYLES
from litm.prompt._formats import FORMATS
from litm.prompt._settings import QUESTION_POSITIONS
from litm.prompt._templates import LANGS

__all__ = [
    "BackendOpt",
    "DedupOpt",
    "FormatOpt",
    "LangOpt",
    "QuestionPosOpt",
    "RankByOpt",
    "RetrieverOpt",
    "ScoreAsOpt",
    "StyleOpt",
    "budget_flags",
    "check_strategy",
    "in_flags",
]

FormatOpt = Enum("FormatOpt", {n: n for n in FORMATS}, type=str)  # type: ignore[misc]
LangOpt = Enum("LangOpt", {n: n for n in LANGS}, type=str)  # type: ignore[misc]
QuestionPosOpt = Enum("QuestionPosOpt", {n: n for n in QUESTION_POSITIONS}, type=str)  # type: ignore[misc]
# "auto" (the default): the anchors of the model the prompt is for (litm.prompt.anchors_for).
StyleOpt = Enum("StyleOpt", {n: n for n in ("auto", *STYLES)}, type=str)  # type: ignore[misc]
ScoreAsOpt = Enum("ScoreAsOpt", {n: n for n in SCORE_AS}, type=str)  # type: ignore[misc]


class RankByOpt(StrEnum):
    input = "input"
    score = "score"


class DedupOpt(StrEnum):
    id = "id"
    content = "content"


class RetrieverOpt(StrEnum):
    auto = "auto"
    bm25 = "bm25"
    dense = "dense"
    hybrid = "hybrid"


class BackendOpt(StrEnum):
    numpy = "numpy"
    faiss = "faiss"


def check_strategy(value: str | None) -> str | None:
    """A ``--strategy`` callback: the name if it is registered (plugins included), else a usage error."""
    if value is None:
        return None
    names = strategy_names()
    if value not in names:
        raise typer.BadParameter(f"{value!r} is not a placement strategy; choose from {', '.join(names)}")
    return value


def in_flags(err: ContextBudgetExceeded, flags: dict[str, str]) -> ContextBudgetExceeded:
    """``err`` reworded for the command line: each library parameter named in ``flags`` (``max_input_tokens``)
    becomes the command's flag (``--budget``); ``name=64`` reads ``--flag 64``. The numbers are kept.

    >>> err = ContextBudgetExceeded("max_input_tokens=20 is too small", prompt_tokens=0, budget=-44,
    ...                             advice="raise max_input_tokens")
    >>> str(in_flags(err, {"max_input_tokens": "--budget"}))
    '--budget 20 is too small (raise --budget)'
    """

    def say(text: str) -> str:
        for name, flag in flags.items():
            text = re.sub(rf"\b{name}=", f"{flag} ", text)
            text = re.sub(rf"\b{name}\b", flag, text)
        return text

    message = str(err)
    if err.advice:
        message = message.removesuffix(f" ({err.advice})")
    return ContextBudgetExceeded(
        say(message), prompt_tokens=err.prompt_tokens, budget=err.budget, floor=err.floor, advice=say(err.advice),
        margin=err.margin, upper=err.upper,
    )  # fmt: skip


@contextmanager
def budget_flags(**flags: str) -> Iterator[None]:
    """Run the block; a :class:`~litm.errors.ContextBudgetExceeded` it raises names the command's flags instead of
    the library's parameters (see :func:`in_flags`): ``litm rag --budget 20`` must not be told to "raise
    max_input_tokens"."""
    try:
        yield
    except ContextBudgetExceeded as err:
        raise in_flags(err, flags) from None
