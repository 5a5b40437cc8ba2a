"""Anchors by model: the format a model was measured best with, else Liu et al.'s plain format.

Which document format a prompt gets is chosen the way ``auto`` placement is (issue 41): by evidence about the
model, and by a rule that no committed run contradicts when there is none.

- **Measured** (:data:`MEASURED_ANCHORS`): a model with a committed anchor ablation of litm's id-and-title
  format (the ``minimal`` arm) against the plain one gets ``minimal`` (:data:`MINIMAL_ANCHORS`) when that arm was
  above plain on one of its runs and below on none, else plain. The embedded Gemma 3 270M gets ``minimal``;
  Qwen2.5-Coder 0.5B, where ``minimal`` lowered the gold answer's likelihood on NQ, gets plain.
  ``tests/test_anchor_rule.py`` re-derives this table from ``docs/anchor-evidence.md``'s runs and fails when
  they disagree.
- **Registered** (:func:`register_anchors`): your own choice for a model spec, for example after
  ``litm bench --ablation-only --arms minimal`` on your model; it wins over the measured table.
- **Otherwise** (:data:`PLAIN_ANCHORS`): Liu et al.'s format (``Document [i](Title: t) text``, their
  instruction), the only one no committed run found below itself: every other format was below it on some
  model (``docs/anchor-evidence.md``). It is still escaped; ``[3]`` cites Document [3]; it does not parse
  back (:func:`~litm.prompt.parse_prompt`) and shows no source: set ``AnchorOptions()`` for that.

A :class:`~litm.prompt.PromptBuilder` without ``anchors=`` picks by this rule at each build, for the model its
plan was placed for (``PlacementOptions(model=...)``) or the ``model=`` given to ``build``.

Example:
    >>> anchors_for("openai:gpt-4o").options.style
    'liu'
    >>> anchors_for("local").options == MINIMAL_ANCHORS
    True
    >>> _ = register_anchors("openai:gpt-4o", AnchorOptions(recap=True))
    >>> anchors_for("openai:gpt-4o").rule
    "registered for model 'openai:gpt-4o'"
    >>> unregister_anchors("openai:gpt-4o")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from litm.errors import InvalidOptionTypeError
from litm.prompt._anchors import AnchorOptions
from litm.util._by_model import ByModel, model_spec

__all__ = [
    "ANCHOR_FALLBACK_RULE",
    "MEASURED_ANCHORS",
    "MINIMAL_ANCHORS",
    "PLAIN_ANCHORS",
    "AnchorChoice",
    "MeasuredAnchors",
    "anchors_for",
    "register_anchors",
    "registered_anchors",
    "unregister_anchors",
]

#: Liu et al.'s plain format, byte for byte the ``plain`` arm of the committed benchmark runs (no recap line).
PLAIN_ANCHORS = AnchorOptions(style="liu", recap=False)
#: litm's id-and-title blocks (the ``minimal`` arm): ``AnchorOptions()``.
MINIMAL_ANCHORS = AnchorOptions()

#: The rule stated when a model has neither a registered nor a measured format.
ANCHOR_FALLBACK_RULE = (
    "no anchor ablation for this model: Liu et al.'s plain format, the one no committed run found below plain "
    "(docs/anchor-evidence.md)"
)

Arm = Literal["minimal", "plain"]


@dataclass(frozen=True)
class MeasuredAnchors:
    """One model's measured format: ``model`` (its name in the evidence), the ``arm`` it gets and its ``specs``."""

    model: str
    arm: Arm
    specs: tuple[str, ...]

    @property
    def options(self) -> AnchorOptions:
        return MINIMAL_ANCHORS if self.arm == "minimal" else PLAIN_ANCHORS


#: The models with a committed ablation of ``minimal`` against plain (``docs/anchor-evidence.md``), and the arm
#: each gets; ``tests/test_anchor_rule.py`` checks it against the committed runs.
MEASURED_ANCHORS: tuple[MeasuredAnchors, ...] = (
    MeasuredAnchors("gemma3-270m", "minimal", ("local", "local:gemma3-270m")),
    MeasuredAnchors("qwen2.5-coder-0.5b", "plain", ("local:qwen2.5-coder-0.5b",)),
)
_MEASURED = {spec: m for m in MEASURED_ANCHORS for spec in m.specs}

_REGISTERED: ByModel[AnchorOptions] = ByModel()


class AnchorChoice(NamedTuple):
    """The anchors a model gets and the rule that chose them (what ``litm demo`` prints)."""

    options: AnchorOptions
    rule: str


def register_anchors(spec: str, options: AnchorOptions) -> AnchorOptions:
    """Give the model ``spec`` these anchors wherever a builder picks by model; registering again replaces them.

    Example:
        >>> register_anchors("local:mine", AnchorOptions(style="bracket")).style
        'bracket'
        >>> anchors_for("local:mine").options.style
        'bracket'
        >>> unregister_anchors("local:mine")
    """
    key = model_spec(spec)
    if not isinstance(options, AnchorOptions):
        raise InvalidOptionTypeError(f"anchors must be an AnchorOptions, got {type(options).__name__}")
    _REGISTERED.set(key, options)
    return options


def unregister_anchors(spec: str) -> None:
    """Forget the anchors registered for ``spec`` (a spec with none is ignored).

    Example:
        >>> unregister_anchors("local:never-registered")
    """
    _REGISTERED.remove(spec)


def registered_anchors() -> dict[str, AnchorOptions]:
    """A copy of every registered choice by model spec.

    Example:
        >>> isinstance(registered_anchors(), dict)
        True
    """
    return _REGISTERED.copy()


def anchors_for(spec: str | None) -> AnchorChoice:
    """The anchors for the model ``spec`` (None: a prompt for no particular model) and the rule that chose them.

    Registered anchors first, then the measured table, then Liu et al.'s plain format.

    Example:
        >>> anchors_for(None).rule == ANCHOR_FALLBACK_RULE
        True
        >>> anchors_for("local:qwen2.5-coder-0.5b").options == PLAIN_ANCHORS
        True
    """
    if spec is None:
        return AnchorChoice(PLAIN_ANCHORS, ANCHOR_FALLBACK_RULE)
    key = model_spec(spec)
    registered = _REGISTERED.get(key)
    if registered is not None:
        return AnchorChoice(registered, f"registered for model {key!r}")
    measured = _MEASURED.get(key)
    if measured is not None:
        if measured.arm == "minimal":
            why = "litm's id-and-title tags, above Liu et al.'s plain format on a committed run and below it on none"
        else:
            why = "Liu et al.'s plain format, which litm's id-and-title tags were below on a committed run"
        return AnchorChoice(measured.options, f"measured for {measured.model}: {why} (docs/anchor-evidence.md)")
    return AnchorChoice(PLAIN_ANCHORS, ANCHOR_FALLBACK_RULE)
