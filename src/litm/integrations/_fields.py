"""Pydantic fields for the LangChain and LlamaIndex components (both frameworks build components on pydantic 2).

:class:`PlacingFields` carries a :class:`~litm.placement.PlacementOptions` (one ``placement`` field, with
``strategy`` as its shorthand),
:class:`PromptFields` those of a prompt builder and an optional :class:`~litm.integrations._options.Budget`,
:class:`CompressionFields` those of a :class:`~litm.integrations._compression.Compressing`.
Every field holds or dumps to a JSON value (the placement, the profile and the builder in their own JSON
forms), so a component serialises with its framework's own machinery (``model_dump``, LlamaIndex ``to_dict`` /
``from_dict``).

Settings are checked by litm before pydantic sees them, so a bad value raises litm's one-line typed error
(``UnknownStrategyError``, ``InvalidOptionError``, ...) rather than a pydantic ``ValidationError``, and a
misspelt option name is refused instead of ignored. A component subclass sets the placement it uses when given
none (LangChain ranks by the given order; LlamaIndex by score when every node has one).

Example:
    >>> class Reorder(PlacingFields):
    ...     pass
    >>> from litm.placement import PlacementOptions
    >>> reorder = Reorder(strategy="edges", placement=PlacementOptions(top_k=3))
    >>> reorder.placing.strategy, reorder.placing.top_k, reorder.model_dump()["placement"]["top_k"]
    ('edges', 3, 3)
    >>> Reorder(stratgy="edges")
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionError: Reorder: unknown option(s) stratgy; known: placement, strategy
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING
from dataclasses import fields as dataclass_fields
from typing import TYPE_CHECKING, Any, ClassVar, get_type_hints

from litm.errors import InvalidOptionError, MissingDependencyError, UnsupportedTypeError
from litm.integrations._compression import Compressing
from litm.integrations._options import Budget, CountAs, component_placement, no_budget, optional_budget
from litm.placement import PlacementOptions
from litm.prompt import PromptBuilder

try:
    from pydantic import BaseModel, ConfigDict, PrivateAttr, create_model, field_serializer, field_validator
    from pydantic_core import PydanticUndefined
except ImportError as exc:  # pragma: no cover - both frameworks depend on pydantic
    raise MissingDependencyError(
        "litm's LangChain and LlamaIndex components need pydantic 2: pip install 'litm[langchain]' or "
        "'litm[llamaindex]'"
    ) from exc

__all__ = ["CompressionFields", "PlacingFields", "PromptFields", "SettingsChecked", "pydantic_fields"]

_COMPRESSION = tuple(f.name for f in dataclass_fields(Compressing))
_BUDGET = ("tokenizer", "max_input_tokens", "reserve_output_tokens", "count_as")


class SettingsChecked(BaseModel):
    """Refuses keyword arguments the component has no field for (pydantic would ignore them)."""

    def __init__(self, **data: Any) -> None:
        known = type(self).model_fields
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise InvalidOptionError(
                f"{type(self).__name__}: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        super().__init__(**data)

    @classmethod
    def _given_or_default(cls, data: dict[str, Any], name: str) -> Any:
        if name in data:
            return data[name]
        default = cls.model_fields[name].default
        return None if default is PydanticUndefined else default


class PlacingFields(SettingsChecked):
    """How to rank and place: ``placement`` (a :class:`~litm.placement.PlacementOptions`), ``strategy`` its shorthand.

    Without a ``placement`` the component's :attr:`default_placement` is used (its framework's convention); a
    ``placement`` given is used as it is. ``strategy``, when given, replaces the placement's strategy.
    """

    #: The placement of a component given none: ranked by score when every item has one (``rank_by="auto"``).
    default_placement: ClassVar[PlacementOptions] = PlacementOptions(rank_by="auto")

    # A PlacementOptions is checked by litm (below), not taken apart by pydantic as a dataclass.
    model_config = ConfigDict(arbitrary_types_allowed=True)

    strategy: str | None = None
    #: Saved as its ``to_dict()`` form (a JSON value); the constructor also takes that form back.
    placement: PlacementOptions | None = None

    def __init__(self, **data: Any) -> None:
        owner = type(self).__name__
        if isinstance(data.get("placement"), Mapping):
            data["placement"] = PlacementOptions.from_dict(data["placement"])
        component_placement(owner, data.get("placement"), data.get("strategy"), self.default_placement)
        super().__init__(**data)

    @field_validator("placement", mode="plain")
    @classmethod
    def _checked_placement(cls, value: object) -> PlacementOptions | None:
        if isinstance(value, Mapping):  # the saved form, what model_dump writes
            return PlacementOptions.from_dict(value)
        if value is not None and not isinstance(value, PlacementOptions):
            raise UnsupportedTypeError(
                f"placement must be a litm.placement.PlacementOptions, got {type(value).__name__}"
            )
        return value

    @field_serializer("placement")
    def _saved_placement(self, value: PlacementOptions | None) -> dict[str, object] | None:
        return None if value is None else value.to_dict()

    @property
    def placing(self) -> PlacementOptions:
        """The placement in force: :attr:`placement` (or the default) with :attr:`strategy` applied."""
        return component_placement(type(self).__name__, self.placement, self.strategy, self.default_placement)


class PromptFields(SettingsChecked):
    """The prompt builder and, when ``tokenizer`` and ``max_input_tokens`` are set, a token budget.

    ``builder`` takes a :class:`~litm.prompt.PromptBuilder` (kept in its ``to_dict()`` form) or that form.
    """

    #: Components that cannot work without a budget (the trimmers) set this.
    budget_required: ClassVar[bool] = False

    builder: dict[str, Any] | None = None
    tokenizer: str | None = None
    max_input_tokens: int | None = None
    reserve_output_tokens: int = 0
    count_as: CountAs = "openai"

    _built: tuple[dict[str, Any], PromptBuilder] | None = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        builder = data.get("builder")
        if isinstance(builder, PromptBuilder):
            data["builder"] = builder.to_dict()
        elif builder is not None:
            PromptBuilder.from_dict(builder)  # a malformed form raises PromptOptionError here, not at first use
        settings = [self._given_or_default(data, name) for name in _BUDGET]
        if optional_budget(type(self).__name__, *settings) is None and self.budget_required:
            raise no_budget(type(self).__name__)
        super().__init__(**data)

    @property
    def budget(self) -> Budget | None:
        """The token budget, or None when the component has none (read at each call)."""
        return optional_budget(type(self).__name__, *(getattr(self, name) for name in _BUDGET))

    @property
    def required_budget(self) -> Budget:
        """The token budget, or the typed error that says how to set one (a trimmer cannot work without)."""
        budget = self.budget
        if budget is None:
            raise no_budget(type(self).__name__)
        return budget

    @property
    def prompt_builder(self) -> PromptBuilder:
        """The :class:`~litm.prompt.PromptBuilder` (litm's default when none was given), built once."""
        if self.builder is None:
            return PromptBuilder()
        if self._built is None or self._built[0] != self.builder:
            self._built = (self.builder, PromptBuilder.from_dict(self.builder))
        return self._built[1]


class _CompressionSettings(SettingsChecked):
    """What :data:`CompressionFields` does with its fields, which are :class:`Compressing`'s (see below)."""

    _compressing: Compressing | None = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        # litm checks first (a missing tokenizer is its typed error, not a pydantic ValidationError).
        compressing = Compressing(**{name: self._given_or_default(data, name) for name in _COMPRESSION})
        if "ratio" in data:
            data["ratio"] = compressing.ratio
        super().__init__(**data)
        self._compressing = compressing

    @property
    def compressing(self) -> Compressing:
        """The settings as a validated :class:`~litm.integrations._compression.Compressing`, rebuilt only when a
        field was changed (it holds the scorer's loaded model)."""
        settings = {name: getattr(self, name) for name in _COMPRESSION}
        if self._compressing is None or self._compressing.to_dict() != settings:
            self._compressing = Compressing(**settings)
        return self._compressing


def pydantic_fields(settings: type) -> dict[str, tuple[object, object]]:
    """The fields of the dataclass ``settings`` as pydantic field definitions: ``(type, default)``, ``...`` when
    the field has no default.

    >>> pydantic_fields(Compressing)["target"], pydantic_fields(Compressing)["tokenizer"]
    ((int | None, None), (<class 'str'>, Ellipsis))
    """
    hints = get_type_hints(settings)
    return {
        f.name: (hints[f.name], ... if f.default is MISSING else f.default) for f in dataclass_fields(settings)
    }


if TYPE_CHECKING:
    CompressionFields = _CompressionSettings
else:
    # One definition of the compression settings: Compressing's fields, with their types and defaults, become
    # the components' pydantic fields, so a setting added there is a field of every compression component.
    CompressionFields = create_model(
        "CompressionFields",
        __base__=_CompressionSettings,
        __module__=__name__,
        __doc__="The compression settings (see :class:`~litm.integrations._compression.Compressing`), with its "
        "defaults.",
        **pydantic_fields(Compressing),
    )
