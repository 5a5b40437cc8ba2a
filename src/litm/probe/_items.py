"""Item tasks after Liu et al.: key-value retrieval (``kv``) and multi-document QA (``docqa``).

The context is a list of whole items (UUID pairs, or "Document [i](Title: ...)" passages) with the gold
item at the index nearest the probed depth. A context length is filled with as many whole items as fit,
so the prompt is at most, not exactly, the stated length (the row records the real count and
``exact: false``). Depth is the gold item's index over ``n - 1``.

``kv`` reads the bundled Liu et al. examples (75 pairs each) and adds seeded synthetic UUID pairs when a
length needs more. ``docqa`` asks a NaturalQuestions-Open question with its gold Wikipedia passage among
other questions' gold passages; Liu et al. used retrieved (topically related) distractors, so these are
easier to tell apart, and a passage that contains one of the question's answers is never a distractor.

Example:
    >>> inst = KVTask().instance(seed=0, depth=0.5, depths=(0.0, 0.5, 1.0))
    >>> inst.question.startswith('Key: "')
    True
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Generic, TypeVar

from litm.errors import ProbeError
from litm.eval._datasets import NQRow, kv_examples, nq_rows
from litm.eval._scoring import normalize
from litm.placement._documents import Doc
from litm.probe._corpus import Corpus
from litm.probe._layouts import Layout
from litm.probe._tasks import BuiltPrompt, Task, TaskInstance
from litm.prompt._styles import render_documents

__all__ = ["DocQATask", "ItemTask", "KVTask", "render_docs", "render_kv"]

_MIN_DISTRACTOR_ANSWER = 4  # shorter NQ answers ("1", "yes") would match by accident


@lru_cache(maxsize=1)
def _nq() -> tuple[NQRow, ...]:
    return tuple(nq_rows())


@lru_cache(maxsize=1)
def _nq_normalized() -> tuple[str, ...]:
    return tuple(normalize(str(r["ctxs"][0]["text"])) for r in _nq())


@lru_cache(maxsize=256)
def _docqa_distractors(seed: int, qi: int) -> tuple[int, ...]:
    """Other questions' gold passages in a seeded order, minus any that contain one of this question's answers."""
    rows, texts = _nq(), _nq_normalized()
    answers = [a for a in (normalize(str(x)) for x in rows[qi]["answers"]) if a]
    gold_title = rows[qi]["ctxs"][0]["title"]
    order = list(range(len(rows)))
    random.Random(f"docqa-{seed}").shuffle(order)
    return tuple(
        i
        for i in order
        if i != qi and rows[i]["ctxs"][0]["title"] != gold_title and not any(a in texts[i] for a in answers)
    )


def render_kv(pairs: Sequence[tuple[str, str]]) -> str:
    """A JSON object of string pairs, one pair per line (valid JSON, easy to read and to tokenise)."""
    body = ",\n ".join(f'"{k}": "{v}"' for k, v in pairs)
    return "{" + body + "}"


def render_docs(docs: Sequence[tuple[str, str]]) -> str:
    """Liu et al.'s search-result format, ``Document [i](Title: t) text`` one per line, from ``(title, text)``
    pairs: litm's one renderer of that style (``render_documents``, style ``liu``)."""
    return render_documents([Doc(text=x, id=f"doc-{i}", title=t) for i, (t, x) in enumerate(docs, start=1)], "liu")


def _fit(render_n: Callable[[int], str], count: Callable[[str], int], target: int, upper: int) -> int:
    """The largest n in [1, upper] whose prompt has at most ``target`` tokens (0 if even one is too long)."""
    # Exponential search first: counting a prompt far longer than the target would cost more than the fit.
    lo, hi = 0, 1
    while hi < upper and count(render_n(hi)) <= target:
        lo, hi = hi, min(hi * 2, upper)
    if hi == upper and count(render_n(hi)) <= target:
        return hi
    hi -= 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(render_n(mid)) <= target:
            lo = mid
        else:
            hi = mid - 1
    return lo


ItemT = TypeVar("ItemT")


class ItemTask(Task, Generic[ItemT]):
    """A task whose context is a list of whole items with the gold item at the probed depth."""

    uses_corpus = False

    def items(self, inst: TaskInstance, n: int) -> tuple[list[ItemT], ItemT]:
        """The first ``n - 1`` distractor items and the gold item."""
        raise NotImplementedError

    def render_items(self, items: Sequence[ItemT]) -> str:
        raise NotImplementedError

    def item_value(self, item: ItemT) -> str | None:
        """The value an answer would copy from this item (for wrong-item detection)."""
        raise NotImplementedError

    def max_items(self, inst: TaskInstance) -> int:
        raise NotImplementedError

    def arrange(self, inst: TaskInstance, n: int, depth: float) -> tuple[list[ItemT], int]:
        distractors, gold = self.items(inst, n)
        gi = round(depth * (n - 1)) if n > 1 else 0
        return [*distractors[:gi], gold, *distractors[gi:]], gi

    def positions(self, items: Sequence[ItemT], gold_index: int) -> dict[str, float]:
        """Each other item's value and its relative position (for wrong-item and copy detection)."""
        n = len(items)
        out: dict[str, float] = {}
        for i, item in enumerate(items):
            v = self.item_value(item)
            if i != gold_index and v is not None:
                out.setdefault(v, i / (n - 1) if n > 1 else 0.0)
        return out

    def build(
        self,
        inst: TaskInstance,
        layout: Layout,
        target: int,
        count: Callable[[str], int],
        corpus: Corpus | None,
        nest: Sequence[int] = (),
    ) -> BuiltPrompt:
        # Items nest without help: a shorter length holds the first distractors of a longer one.
        def render(doc: str) -> str:
            return layout.render(
                document=doc,
                question=inst.question,
                answer_prefix=inst.answer_prefix,
                instruction=inst.instruction,
                doc_label=inst.doc_label,
            )

        depth = inst.needles[0][0] if inst.needles else float(inst.params["depth"])

        # n is fitted with the gold item last, so every depth of a trial gets the same items (shared prefix).
        def render_n(k: int) -> str:
            return render(self.render_items(self.arrange(inst, k, 1.0)[0]))

        n = _fit(render_n, count, target, self.max_items(inst))
        while True:
            if n < 1:
                raise ProbeError(f"length {target} is too short for one {self.name} item in this prompt")
            items, gi = self.arrange(inst, n, depth)
            document = self.render_items(items)
            prompt = render(document)
            tokens = count(prompt)
            if tokens <= target:
                break
            n -= 1
        positions = self.positions(items, gi)
        recipe = {"document": {"kind": self.name, "n": n, "gold_index": gi, **dict(inst.params)}}
        actual = (gi / (n - 1) if n > 1 else 0.0,)
        return BuiltPrompt(prompt, tokens, tokens == target, actual, document, recipe, positions)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class KVTask(ItemTask[tuple[str, str]]):
    """Liu et al. key-value retrieval: find the value of one UUID key in a JSON object of UUID pairs."""

    name = "kv"

    def instance(self, seed: int, depth: float, depths: Sequence[float]) -> TaskInstance:
        examples = kv_examples()
        ex = examples[seed % len(examples)]
        return TaskInstance(
            task=self.name,
            question=f'Key: "{ex["key"]}"',
            answers=(str(ex["value"]),),
            instruction="Extract the value corresponding to the specified key in the JSON object below.",
            doc_label="JSON data:",
            answer_prefix="Corresponding value:",
            max_tokens=64,
            params={"seed": seed, "example": seed % len(examples), "depth": depth},
        )

    def max_items(self, inst: TaskInstance) -> int:
        return 4096

    def items(self, inst: TaskInstance, n: int) -> tuple[list[tuple[str, str]], tuple[str, str]]:
        ex = kv_examples()[int(inst.params["example"])]
        gold = (str(ex["key"]), str(ex["value"]))
        pairs = [(str(k), str(v)) for k, v in ex["ordered_kv_records"] if str(k) != gold[0]]
        if n - 1 > len(pairs):
            rng = random.Random(f"kv-{inst.params['seed']}")
            while len(pairs) < n - 1:
                pairs.append((_uuid(rng), _uuid(rng)))
        return pairs[: n - 1], gold

    def render_items(self, items: Sequence[tuple[str, str]]) -> str:
        return render_kv(items)

    def item_value(self, item: tuple[str, str]) -> str | None:
        return str(item[1])


class DocQATask(ItemTask[tuple[str, int]]):
    """Liu et al. multi-document QA on NQ-Open: the gold passage among other questions' gold passages."""

    name = "docqa"

    def instance(self, seed: int, depth: float, depths: Sequence[float]) -> TaskInstance:
        rows = _nq()
        qi = (seed * 7919) % len(rows)  # a stride through the file, so trials are unrelated questions
        row = rows[qi]
        return TaskInstance(
            task=self.name,
            question=f"Question: {row['question']}",
            answers=tuple(str(a) for a in row["answers"]),
            instruction=(
                "Write a high-quality answer for the given question using only the provided search results "
                "(some of which might be irrelevant)."
            ),
            doc_label="Search results:",
            max_tokens=32,
            params={"seed": seed, "question_index": qi, "depth": depth},
        )

    def _distractor_rows(self, inst: TaskInstance) -> tuple[int, ...]:
        return _docqa_distractors(int(inst.params["seed"]), int(inst.params["question_index"]))

    def max_items(self, inst: TaskInstance) -> int:
        return len(self._distractor_rows(inst)) + 1

    def items(self, inst: TaskInstance, n: int) -> tuple[list[tuple[str, int]], tuple[str, int]]:
        return [("d", i) for i in self._distractor_rows(inst)[: n - 1]], ("g", int(inst.params["question_index"]))

    def render_items(self, items: Sequence[tuple[str, int]]) -> str:
        rows = _nq()
        return render_docs([(rows[i]["ctxs"][0]["title"], rows[i]["ctxs"][0]["text"]) for _, i in items])

    def item_value(self, item: tuple[str, int]) -> str | None:
        row = _nq()[item[1]]
        text = normalize(row["ctxs"][0]["text"])
        for a in row["answers"]:
            if len(a) >= _MIN_DISTRACTOR_ANSWER and normalize(a) in text:
                return str(a)
        return None

