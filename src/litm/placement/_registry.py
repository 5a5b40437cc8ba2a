"""Strategies by name: the built-ins, ones registered in code, and plugins found by entry point.

One rule for every source: a name is taken once. :func:`register_strategy` refuses to overwrite a
registered name (built-in or not) unless ``replace=True``. Third-party packages publish strategies under
the entry-point group ``litm.strategies`` (``name = "package.module:Factory"``); they are loaded on the
first lookup by name, so the command line and Python see the same list.

Example:
    >>> from litm.placement._strategies import Edges
    >>> class Mine(Edges):
    ...     name = "mine"
    >>> register_strategy("mine", Mine)
    >>> get_strategy("mine").arrange(4)
    [0, 2, 3, 1]
    >>> register_strategy("mine", Mine)
    Traceback (most recent call last):
    ...
    litm.errors.AlreadyRegisteredError: strategy 'mine' is already registered (pass replace=True to replace it)
    >>> unregister_strategy("mine")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from litm.errors import InvalidOptionError, InvalidStrategyError, UnknownStrategyError
from litm.placement._auto import AutoOrder
from litm.placement._profile import PositionProfile
from litm.placement._strategies import Edges, LangChainOrder, ProfileOrder, Pyramid, RandomOrder, RankOrder, Reverse
from litm.placement._strategy import Strategy
from litm.util._registry import Registry

__all__ = [
    "DEFAULT_STRATEGY",
    "ENTRY_POINT_GROUP",
    "STRATEGIES",
    "get_strategy",
    "is_strategy_name",
    "register_strategy",
    "strategy_names",
    "unregister_strategy",
]

#: The one default strategy of every entry point (``place``, ``fit``, the prompt builder's ``strategy=``,
#: ``Pipeline``, the framework components, the CLI): ``auto``, the model's measured profile when one is given
#: or registered for its spec, else ``edges``, the fixed order no committed run found significantly below rank
#: order (``pyramid``, the earlier default, was on Qwen 0.5B; docs/strategy-evidence.md).
DEFAULT_STRATEGY = "auto"
#: The entry-point group third-party strategies are published under.
ENTRY_POINT_GROUP = "litm.strategies"

_REGISTRY: Registry[Callable[..., Strategy]] = Registry(
    "strategy",
    ENTRY_POINT_GROUP,
    {
        "auto": AutoOrder,
        "none": RankOrder,
        "reverse": Reverse,
        "edges": Edges,
        "pyramid": Pyramid,
        "langchain": LangChainOrder,
        "profile": ProfileOrder,
        "random": RandomOrder,
    },
)
#: A read-only view of every registered strategy factory by name (entry points included once loaded).
STRATEGIES: Mapping[str, Callable[..., Strategy]] = _REGISTRY.view


def register_strategy(name: str, factory: Callable[..., Strategy], *, replace: bool = False) -> None:
    """Make a custom strategy selectable by name, in Python and on the command line.

    Raises :class:`~litm.errors.AlreadyRegisteredError` when ``name`` is taken and ``replace`` is False.
    """
    if not name or not isinstance(name, str):
        raise InvalidOptionError(f"a strategy name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise InvalidStrategyError(f"strategy {name!r}: the factory must be callable, got {type(factory).__name__}")
    _REGISTRY.register(name, factory, replace=replace)


def unregister_strategy(name: str) -> None:
    """Remove a registered strategy (a missing name is ignored)."""
    _REGISTRY.unregister(name)


def is_strategy_name(name: str) -> bool:
    """Whether ``name`` is registered (plugins are looked at only for a name that is not)."""
    return _REGISTRY.get(name) is not None


def strategy_names() -> list[str]:
    """Every selectable strategy name, plugins included, in registration order (what ``--strategy`` accepts).

    >>> {"auto", "edges", "none"} <= set(strategy_names())
    True
    """
    return _REGISTRY.names()


def get_strategy(
    strategy: str | Strategy, *, profile: PositionProfile | None = None, model: str | None = None
) -> Strategy:
    """Resolve a strategy name (or pass a :class:`Strategy` through).

    ``profile`` feeds ``profile`` and ``auto``; ``model`` (a model spec) lets ``auto`` find a profile
    registered for it (:func:`~litm.placement._auto.register_profile`) when none is given.

    Example:
        >>> get_strategy("auto").rule.split(":")[0]
        'no measured profile for this model'
    """
    if isinstance(strategy, Strategy):
        return strategy
    factory = _REGISTRY.get(strategy) if isinstance(strategy, str) else None
    if factory is None:
        raise UnknownStrategyError(
            f"unknown placement strategy {strategy!r}; choose from {', '.join(sorted(strategy_names()))}"
        )
    if strategy == "profile":
        return ProfileOrder(profile)
    if strategy == "auto" and factory is AutoOrder:
        return AutoOrder(profile, model=model)
    built = factory()
    if not isinstance(built, Strategy):
        raise InvalidStrategyError(f"strategy {strategy!r}: the factory built a {type(built).__name__}, not a Strategy")
    return built
