"""Every probe task by name: the haystack tasks and the item tasks, in one read-only table.

Example:
    >>> sorted(TASKS)
    ['chain', 'docqa', 'kv', 'multi', 'needle', 'nolima', 'nolima-literal', 'nolima-multi', 'paraphrase']
    >>> get_task("multi", k=3).k
    3
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from types import MappingProxyType

from litm.errors import ProbeError
from litm.probe._items import DocQATask, KVTask
from litm.probe._nolima import NolimaLiteralTask, NolimaMultiTask, NolimaTask
from litm.probe._tasks import ChainTask, MultiNeedleTask, NeedleTask, ParaphraseTask, Task

__all__ = ["TASKS", "get_task"]

#: Task factories by name, graded from easy to hard within each kind.
TASKS: Mapping[str, Callable[..., Task]] = MappingProxyType(
    {
        "needle": NeedleTask,
        "paraphrase": ParaphraseTask,
        "chain": ChainTask,
        "multi": MultiNeedleTask,
        "nolima-literal": NolimaLiteralTask,
        "nolima": NolimaTask,
        "nolima-multi": NolimaMultiTask,
        "kv": KVTask,
        "docqa": DocQATask,
    }
)


def get_task(name: str, **options: object) -> Task:
    """A task by name (``needle``, ``paraphrase``, ``chain``, ``multi``, ``nolima-literal``, ``nolima``,
    ``nolima-multi``, ``kv``, ``docqa``)."""
    if name == "multi-needle":
        name = "multi"
    if name not in TASKS:
        raise ProbeError(f"unknown probe task {name!r}; choose from {', '.join(TASKS)}")
    factory = TASKS[name]
    # Options are shared across tasks on the command line (--k, --chain-depth): pass each task its own.
    params = inspect.signature(factory).parameters
    return factory(**{k: v for k, v in options.items() if v is not None and k in params})
