"""Build the exact prompt of each planned call: the tasks, layouts, corpus and counter of a run, once.

Example:
    >>> from litm.probe._grid import ProbeConfig, plan
    >>> from litm.probe._testing import DeadZoneModel
    >>> config = ProbeConfig(lengths=(128,), depths=(0.0, 1.0), trials=1, layouts=("plain",))
    >>> p = prepare(plan(config)[1], ProbeContext(DeadZoneModel(), config))
    >>> p.built.prompt_tokens, p.built.prompt.startswith("Document:")
    (128, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from litm.models._base import Model
from litm.probe._corpus import Corpus, default_corpus
from litm.probe._grid import ProbeConfig, TrialSpec
from litm.probe._layouts import CLOSED_BOOK, Layout, get_layout
from litm.probe._registry import get_task
from litm.probe._tasks import BuiltPrompt, Task, TaskInstance

__all__ = ["Prepared", "ProbeContext", "prepare"]


@dataclass
class Prepared:
    """A spec with its task instance, layout and built prompt, ready to run."""

    spec: TrialSpec
    instance: TaskInstance
    layout: Layout
    built: BuiltPrompt
    max_tokens: int

    @property
    def needle_depth(self) -> float | None:
        """The actual depth of the earliest inserted fact (None for a closed-book control): the prompt's
        text up to there is what it can share with the other prompts of its trial."""
        depths = self.built.actual_depths
        return min(depths) if depths and self.spec.kind == "trial" else None


class ProbeContext:
    """Tasks, layouts, corpus and token counter of one run (built once, shared by every prompt)."""

    def __init__(self, model: Model, config: ProbeConfig, corpus: Corpus | None = None) -> None:
        self.config = config
        self.count: Callable[[str], int] = model.count_tokens
        self.tasks: dict[str, Task] = {
            t: get_task(t, k=config.k, second_depth=config.chain_depth) for t in config.tasks
        }
        needs_corpus = any(t.uses_corpus for t in self.tasks.values())
        self.corpus = corpus if corpus is not None else (default_corpus() if needs_corpus else None)
        self.layouts: dict[str, Layout] = (
            {"custom": Layout("custom", config.template)}
            if config.template
            else {name: get_layout(name) for name in config.layouts}
        )
        self.layouts["closed-book"] = CLOSED_BOOK


def prepare(spec: TrialSpec, ctx: ProbeContext) -> Prepared:
    """Build the exact prompt of one spec (closed-book controls get the question alone).

    With ``config.filler == "nested"`` a haystack extends the filler of the grid's shorter lengths.
    """
    task = ctx.tasks[spec.task]
    depth = 0.5 if spec.depth is None else spec.depth
    inst = task.instance(spec.seed, depth, ctx.config.depths)
    max_tokens = ctx.config.max_tokens or inst.max_tokens
    layout = ctx.layouts[spec.layout]
    if spec.kind == "closed_book":
        prompt = task.closed_book(inst)
        built = BuiltPrompt(prompt, ctx.count(prompt), False, (), "", {"document": {"kind": "none"}})
    else:
        nest = ctx.config.lengths if ctx.config.filler == "nested" else ()
        built = task.build(inst, layout, spec.length, ctx.count, ctx.corpus, nest)
    return Prepared(spec, inst, layout, built, max_tokens)
