"""Probe tasks of graded difficulty, and the prompts they build.

========== ================================================================= ==================
task       what the model must do                                            answer
========== ================================================================= ==================
needle     find one synthetic fact in real prose                             a 6-digit code
paraphrase find a fact whose wording shares few words with the question      an invented name
chain      combine a fact at the probed depth with one near the end          an invented town
multi      recall k facts spread over several depths (per-fact recall)       k codes
kv         Liu et al. key-value retrieval: a UUID key among UUID pairs       a UUID
docqa      Liu et al. multi-document QA: the gold NQ passage among others     NQ answers
========== ================================================================= ==================

Every fact uses invented names and random numbers, so no model can answer it closed-book (the runner
still runs a closed-book control and reports it); ``docqa`` questions are real NQ questions, so its
closed-book score is the knowledge baseline its curve must be read against. Haystack tasks
(``needle``, ``paraphrase``, ``chain``, ``multi``) use prose filler from a corpus; item tasks (``kv``,
``docqa``) fill the context with whole items (see :mod:`litm.probe._items`). ``paraphrase`` questions still
name the invented person or thing of their needle; :mod:`litm.probe._nolima` has needles that share no
content word with their question.

Example:
    >>> inst = NeedleTask().instance(seed=3, depth=0.5, depths=(0.0, 0.5, 1.0))
    >>> inst.question.startswith("Question: What is the access code for the ")
    True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from litm.errors import ProbeError
from litm.probe._corpus import Corpus, Unit
from litm.probe._insert import UnitCoster, build_exact, fill_exact, filler_budget, text_of
from litm.probe._layouts import CLOSED_BOOK, Layout

__all__ = [
    "BuiltPrompt",
    "ChainTask",
    "HaystackTask",
    "MultiNeedleTask",
    "NeedleTask",
    "ParaphraseTask",
    "Task",
    "TaskInstance",
    "invented_word",
]

_CONS = "bdfgklmnprstvz"
# Nested filler chains kept per task object (a grid has lengths x trials x layouts of them).
_MAX_FILLERS = 4096
_VOWELS = "aeiou"


def invented_word(rng: random.Random, syllables: int = 3) -> str:
    """A pronounceable invented name ("Tavoreli"): no corpus and no model knows it."""
    return "".join(rng.choice(_CONS) + rng.choice(_VOWELS) for _ in range(syllables)).capitalize()


@dataclass(frozen=True)
class TaskInstance:
    """One question with its evidence: what to insert where, what counts as right, and what is a wrong item.

    ``needles`` are (depth, sentence) pairs for haystack tasks; ``targets`` are (depth, value) pairs that
    must all be recalled (``multi``); ``distractors`` are values of *other* items in the context, so an
    answer that returns one is classed as a copied wrong item; ``exclude`` are terms the filler must not
    contain; ``params`` is what an item task needs to rebuild its items.
    """

    task: str
    question: str
    answers: tuple[str, ...]
    needles: tuple[tuple[float, str], ...] = ()
    targets: tuple[tuple[float, str], ...] = ()
    distractors: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    instruction: str = ""
    doc_label: str = "Document:"
    answer_prefix: str = "Answer:"
    # Room for a model that restates the fact first, with a token per digit (SmolLM2 does both).
    max_tokens: int = 32
    params: Mapping[str, int | float | str] = field(default_factory=dict)


@dataclass(frozen=True)
class BuiltPrompt:
    """A rendered prompt plus what the row records: exact token count, actual depths and the recipe."""

    prompt: str
    prompt_tokens: int
    exact: bool
    actual_depths: tuple[float, ...]
    document: str
    recipe: Mapping[str, object]
    # Relative position (0..1) of each distractor value in the document, for copy-position analysis.
    distractor_positions: Mapping[str, float] = field(default_factory=dict)


def _compress(units: Sequence[Unit]) -> list[str | list[int]]:
    """Recipe form of a unit list: runs of consecutive corpus sentences as [start, end), inserted text as str."""
    out: list[str | list[int]] = []
    for u in units:
        if u.ref is None:
            out.append(u.text)
        elif out and isinstance(out[-1], list) and out[-1][1] == u.ref:
            out[-1][1] = u.ref + 1
        else:
            out.append([u.ref, u.ref + 1])
    return out


def layout_recipe(layout: Layout) -> dict[str, str]:
    return {"name": layout.name, "template": layout.template}


class Task:
    """A probe task: makes seeded instances and renders them to exact-length prompts."""

    name: ClassVar[str] = ""
    uses_corpus: ClassVar[bool] = True

    def instance(self, seed: int, depth: float, depths: Sequence[float]) -> TaskInstance:
        raise NotImplementedError

    def build(
        self,
        inst: TaskInstance,
        layout: Layout,
        target: int,
        count: Callable[[str], int],
        corpus: Corpus | None,
        nest: Sequence[int] = (),
    ) -> BuiltPrompt:
        """The prompt of ``inst`` at ``target`` tokens. ``nest``: shorter lengths of the same trial whose
        context this one's should extend (so the shorter prompt's text up to its needle is a prefix of
        this one's), where the task can do that."""
        raise NotImplementedError

    def closed_book(self, inst: TaskInstance) -> str:
        """The question alone: the control that shows whether it is answerable without the context."""
        return CLOSED_BOOK.render(
            document="", question=inst.question, answer_prefix=inst.answer_prefix, instruction=inst.instruction
        )

    def options(self) -> dict[str, object]:
        """Settings that change the prompts (stored in the run settings)."""
        return {}


class HaystackTask(Task):
    """A task whose evidence is a few sentences inserted into prose filler at sentence boundaries."""

    _costers: dict[int, UnitCoster]
    _fillers: dict[tuple[object, ...], tuple[Unit, ...]]

    def build(
        self,
        inst: TaskInstance,
        layout: Layout,
        target: int,
        count: Callable[[str], int],
        corpus: Corpus | None,
        nest: Sequence[int] = (),
    ) -> BuiltPrompt:
        if corpus is None:
            raise ProbeError(f"task {self.name!r} needs a filler corpus")
        if not hasattr(self, "_costers"):
            self._costers, self._fillers = {}, {}
        # One cost cache per tokenizer: unit costs are a pure function of the text.
        coster = self._costers.setdefault(id(count), UnitCoster(count))
        seed = int(inst.params["seed"])

        def render(doc: str) -> str:
            return layout.render(
                document=doc,
                question=inst.question,
                answer_prefix=inst.answer_prefix,
                instruction=inst.instruction,
                doc_label=inst.doc_label,
            )

        def stream() -> Iterator[Unit]:
            return corpus.stream(seed, exclude=inst.exclude)

        insertions = [(d, Unit(" " + s)) for d, s in inst.needles]
        key = (id(coster), corpus.fingerprint, seed, layout.template, inst.question, tuple(s for _, s in inst.needles))

        def canonical(lengths: Sequence[int]) -> tuple[Unit, ...]:
            """The needle-free filler of the longest of ``lengths``, each length's extending the shorter's."""
            if not lengths:
                return ()
            memo = (*key, tuple(lengths))
            if memo not in self._fillers:
                if len(self._fillers) >= _MAX_FILLERS:
                    self._fillers.clear()  # a new run's trials: the old chains are not needed again
                budget = filler_budget(render, count, insertions, lengths[-1])
                units, _ = fill_exact(stream(), budget, coster, 0, canonical(lengths[:-1]))
                self._fillers[memo] = tuple(units)
            return self._fillers[memo]

        base = canonical(sorted(length for length in nest if length < target))
        built = build_exact(render, count, stream, insertions, target, coster, base)
        recipe = {
            "document": {
                "kind": "sentences",
                "corpus": corpus.name,
                "corpus_fingerprint": corpus.fingerprint,
                "units": _compress(built.units),
            }
        }
        return BuiltPrompt(
            built.prompt, built.prompt_tokens, built.exact, built.actual_depths, text_of(built.units), recipe
        )


class NeedleTask(HaystackTask):
    """One fact: "The access code for the <Name> vault is <6 digits>." The plainest retrieval there is."""

    name = "needle"

    def instance(self, seed: int, depth: float, depths: Sequence[float]) -> TaskInstance:
        rng = random.Random(f"needle-{seed}")
        key, code = invented_word(rng), str(rng.randint(100000, 999999))
        return TaskInstance(
            task=self.name,
            question=f"Question: What is the access code for the {key} vault?",
            answers=(code,),
            needles=((depth, f"The access code for the {key} vault is {code}."),),
            exclude=(key, code),
            params={"seed": seed},
        )


# Needle / question pairs that share almost no words besides the invented name ({p}, {w}); {a} is the answer.
_PARAPHRASES = (
    ("After many years abroad, {p} finally made a home in the village of {a}.", "Where does {p} live now?"),
    ("The orchid called {w} grows only on the slopes of Mount {a}.", "Which peak is the flower {w} found on?"),
    ("{p} was taught the cello by a strict tutor named {a}.", "Who gave {p} music lessons?"),
    ("Every winter, {p} takes the ferry across to the island of {a}.", "Where does {p} go during the cold months?"),
    ("The schooner {w} was built in the harbour town of {a}.", "Where was the vessel {w} constructed?"),
)


class ParaphraseTask(HaystackTask):
    """A fact phrased unlike its question (lexical overlap near zero): retrieval by meaning, not by string."""

    name = "paraphrase"

    def instance(self, seed: int, depth: float, depths: Sequence[float]) -> TaskInstance:
        rng = random.Random(f"paraphrase-{seed}")
        needle, question = _PARAPHRASES[seed % len(_PARAPHRASES)]
        p = f"{invented_word(rng, 2)} {invented_word(rng, 3)}"
        w, a = invented_word(rng), invented_word(rng)
        return TaskInstance(
            task=self.name,
            question="Question: " + question.format(p=p, w=w),
            answers=(a,),
            needles=((depth, needle.format(p=p, w=w, a=a)),),
            exclude=(p.split()[1], w, a),
            params={"seed": seed, "template": seed % len(_PARAPHRASES)},
        )


class ChainTask(HaystackTask):
    """Two hops: "<P> works at the <B> Institute." at the probed depth, "The <B> Institute is in <T>." late.

    Answering "which town" needs both facts; answering the institute is a copied intermediate (a wrong item).
    """

    name = "chain"

    def __init__(self, second_depth: float = 0.9) -> None:
        if not 0.0 <= second_depth <= 1.0:
            raise ProbeError(f"chain second_depth {second_depth!r} is outside [0, 1]")
        self.second_depth = second_depth

    def options(self) -> dict[str, object]:
        return {"second_depth": self.second_depth}

    def instance(self, seed: int, depth: float, depths: Sequence[float]) -> TaskInstance:
        rng = random.Random(f"chain-{seed}")
        p = f"{invented_word(rng, 2)} {invented_word(rng, 3)}"
        b, t = invented_word(rng), invented_word(rng)
        return TaskInstance(
            task=self.name,
            question=f"Question: In which town does {p} work?",
            answers=(t,),
            needles=(
                (depth, f"{p} works at the {b} Institute."),
                (self.second_depth, f"The {b} Institute is located in the town of {t}."),
            ),
            distractors=(b,),
            exclude=(p.split()[1], b, t),
            params={"seed": seed},
        )


class MultiNeedleTask(HaystackTask):
    """k facts ("access code for the <Name> vault") at the probed depth and k-1 other grid depths; recall."""

    name = "multi"

    def __init__(self, k: int = 3) -> None:
        if k < 2:
            raise ProbeError(f"multi-needle k must be at least 2, got {k}")
        self.k = k

    def options(self) -> dict[str, object]:
        return {"k": self.k}

    def instance(self, seed: int, depth: float, depths: Sequence[float]) -> TaskInstance:
        rng = random.Random(f"multi-{seed}-{depth}")
        others = [d for d in dict.fromkeys(depths) if d != depth]
        chosen = [depth, *rng.sample(others, min(self.k - 1, len(others)))]
        while len(chosen) < self.k:  # a grid with fewer depths than facts: add random depths
            chosen.append(round(rng.random(), 3))
        keys: list[str] = []
        while len(keys) < self.k:
            w = invented_word(rng)
            if w not in keys:
                keys.append(w)
        codes = [str(rng.randint(100000, 999999)) for _ in keys]
        asked = keys[:]
        rng.shuffle(asked)  # the question's order must not leak the facts' order
        names = ", ".join(asked[:-1]) + f" and {asked[-1]}"
        return TaskInstance(
            task=self.name,
            question=f"Question: What are the access codes for the {names} vaults?",
            answers=tuple(codes),
            needles=tuple(
                (d, f"The access code for the {k} vault is {c}.") for d, k, c in zip(chosen, keys, codes, strict=True)
            ),
            targets=tuple(zip(chosen, codes, strict=True)),
            exclude=(*keys, *codes),
            max_tokens=24 * self.k,
            params={"seed": seed},
        )
