"""NoLiMa-style probe tasks: needles that share no content word with their question.

A literal needle ("The access code for the X vault is ...", asked "What is the access code for the X
vault?") can be found by string matching, so it overstates how far into a long prompt a model really
reads (NoLiMa, Modarressi et al., ICML 2025). Here the question and the needle share no content word
after stemming; one step of world knowledge links them ("{name} lives next to the Semper Opera." /
"Which character has been to Dresden?", link: the Semper Opera is in Dresden). The answer is an invented
name, so no model knows it closed-book.

=============== ============================================================== ======================
task            what the model must do                                         answer
=============== ============================================================== ======================
nolima          find a fact whose question shares no content word with it      an invented name
nolima-literal  the same needles, asked in the needle's own words (control)    the same name
nolima-multi    combine 2-4 facts (a chain of invented people); no content     the first person
                word of the question is in any fact
=============== ============================================================== ======================

``nolima`` and ``nolima-literal`` use the same names, needles and filler for a seed, so their curves are a
paired comparison: only the question's wording differs. The items are a hand-written, hand-checked list
shipped in ``litm/data/nolima-needles.json`` (CC0, see ``litm/data/README.md``).

Example:
    >>> inst = NolimaTask().instance(seed=0, depth=0.5, depths=(0.0, 0.5, 1.0))
    >>> inst.question
    'Question: Who has been to Dresden?'
    >>> inst.answers[0] in inst.needles[0][1]
    True
    >>> NolimaLiteralTask().instance(seed=0, depth=0.5, depths=(0.5,)).question
    'Question: Who lives next to the Semper Opera?'
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, ClassVar, Protocol

from litm.errors import ProbeError
from litm.probe._tasks import HaystackTask, TaskInstance, invented_word
from litm.retrieve._deps import require

__all__ = [
    "DATA_FILE",
    "FUNCTION_WORDS",
    "NolimaChain",
    "NolimaItem",
    "NolimaLiteralTask",
    "NolimaMultiTask",
    "NolimaTask",
    "content_stems",
    "load_chains",
    "load_items",
    "parse_chains",
    "parse_items",
    "shared_content_words",
]

#: The bundled item list (package data).
DATA_FILE = "nolima-needles.json"

_FUNCTION_TEXT = """
    a an the this that these those some any each every all both either neither no none another other such
    i me my mine we us our you your he him his she her it its they them their theirs one ones someone
    anyone everyone somebody something anything everything nobody nothing whoever whatever
    who whom whose which what when where why how
    is am are was were be been being has have had having do does did done can could will would shall should
    may might must
    of in on at by for with from to into onto upon about above below under over between among through
    during before after since until till across along around against toward towards without within off out
    up down near
    and or but nor so yet if then than as because while though although whether
    not never ever only also just very too quite rather once again still even already now here there
    s t d ll re ve
"""
#: Words that carry no content: articles, pronouns, prepositions, conjunctions, auxiliaries, question
#: words, quantifiers and a few adverbs. Everything else counts, so the list errs on the short side.
FUNCTION_WORDS: frozenset[str] = frozenset(_FUNCTION_TEXT.split())

_WORD = re.compile(r"[^\W\d_]+|\d+")
_SLOT = re.compile(r"\{([a-z]+)\}")
_SINGLE_SLOTS = frozenset({"name"})
_CHAIN_SLOTS = ("a", "b", "c", "d")
# Trial t reads item (seed * stride) mod n: a prime stride walks every item once per n trials and mixes the
# file's kinds (places, then everyday facts) even in a short run.
_STRIDE = 7919


class _Stemmer(Protocol):
    def stemWords(self, words: list[str]) -> list[str]: ...


@lru_cache(maxsize=1)
def _stemmer() -> _Stemmer:
    stemmer: _Stemmer = require("Stemmer", "checking nolima items for shared content words (PyStemmer)").Stemmer(
        "english"
    )
    return stemmer


def content_stems(text: str) -> frozenset[str]:
    """Snowball (English) stems of the content words of ``text``: lower case, :data:`FUNCTION_WORDS` out.

    Needs PyStemmer (the ``rag`` extra); running the tasks does not.

    Example:
        >>> sorted(content_stems("Which character has been living in Dresden?"))
        ['charact', 'dresden', 'live']
    """
    words = [w for w in _WORD.findall(text.lower()) if w not in FUNCTION_WORDS]
    return frozenset(_stemmer().stemWords(words)) if words else frozenset()


def shared_content_words(a: str, b: str) -> frozenset[str]:
    """The stems of content words that ``a`` and ``b`` share (empty: no literal link between them).

    Example:
        >>> sorted(shared_content_words("Yuki lives next to the Semper Opera.", "Who has been to Dresden?"))
        []
        >>> sorted(shared_content_words("Yuki lives next to the Semper Opera.", "Who lived near the opera?"))
        ['live', 'opera']
    """
    return content_stems(a) & content_stems(b)


@dataclass(frozen=True)
class NolimaItem:
    """One needle and its question. ``needle`` has a ``{name}`` slot; ``answers`` are templates over it;
    ``literal`` asks the same thing in the needle's words; ``link`` is the one hop of knowledge between
    needle and question; ``exclude`` are terms whose sentences the filler leaves out."""

    id: str
    needle: str
    question: str
    literal: str
    link: str
    answers: tuple[str, ...]
    exclude: tuple[str, ...]


@dataclass(frozen=True)
class NolimaChain:
    """2-4 facts over people ``{a}``..``{d}``; the question needs all of them. ``answers`` name ``{a}``,
    ``distractors`` the intermediate people (an answer naming one is a copied wrong item); ``links`` are
    the hops of knowledge, one a fact."""

    id: str
    facts: tuple[str, ...]
    question: str
    links: tuple[str, ...]
    answers: tuple[str, ...]
    distractors: tuple[str, ...]
    exclude: tuple[str, ...]


def _strings(entry: Mapping[str, Any], key: str, where: str, lo: int = 1, hi: int = 64) -> tuple[str, ...]:
    value = entry.get(key)
    if not isinstance(value, list) or not lo <= len(value) <= hi or not all(isinstance(v, str) and v for v in value):
        raise ProbeError(f"{where}: {key!r} must be a list of {lo}-{hi} non-empty strings")
    return tuple(value)


def _string(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ProbeError(f"{where}: {key!r} must be a non-empty string")
    return value


def _check_slots(texts: Sequence[str], allowed: frozenset[str] | tuple[str, ...], where: str) -> None:
    for text in texts:
        bad = set(_SLOT.findall(text)) - set(allowed)
        if bad or re.sub(_SLOT, "", text).count("{") or re.sub(_SLOT, "", text).count("}"):
            raise ProbeError(f"{where}: {text!r} has a slot other than {', '.join(sorted(allowed))}")


def parse_items(doc: Mapping[str, Any]) -> tuple[NolimaItem, ...]:
    """The ``single`` items of an item document, checked for shape (fields, slots, unique ids).

    Example:
        >>> parse_items({"single": [{"id": "x", "needle": "{name} swims.", "question": "Who?"}]})
        Traceback (most recent call last):
        ...
        litm.errors.ProbeError: nolima-needles.json: single item 'x': 'literal' must be a non-empty string
    """
    entries = doc.get("single")
    if not isinstance(entries, list) or not entries:
        raise ProbeError(f"{DATA_FILE}: 'single' must be a non-empty list")
    out: list[NolimaItem] = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise ProbeError(f"{DATA_FILE}: single item {i} is not an object")
        where = f"{DATA_FILE}: single item {e.get('id', i)!r}"
        item = NolimaItem(
            id=_string(e, "id", where),
            needle=_string(e, "needle", where),
            question=_string(e, "question", where),
            literal=_string(e, "literal", where),
            link=_string(e, "link", where),
            answers=_strings(e, "answers", where),
            exclude=_strings(e, "exclude", where),
        )
        if "{name}" not in item.needle:
            raise ProbeError(f"{where}: the needle has no {{name}} slot")
        _check_slots((item.needle, *item.answers), _SINGLE_SLOTS, where)
        _check_slots((item.question, item.literal, item.link), frozenset(), where)
        out.append(item)
    if len({x.id for x in out}) != len(out):
        raise ProbeError(f"{DATA_FILE}: single item ids repeat")
    return tuple(out)


def parse_chains(doc: Mapping[str, Any]) -> tuple[NolimaChain, ...]:
    """The ``multi`` chains of an item document, checked for shape (2-4 facts, one link a fact, slots).

    Example:
        >>> parse_chains({"multi": [{"id": "x", "facts": ["{a} met {b}."], "question": "Who?"}]})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        litm.errors.ProbeError: nolima-needles.json: multi item 'x': 'facts' must be a list of 2-4 ...
    """
    entries = doc.get("multi")
    if not isinstance(entries, list) or not entries:
        raise ProbeError(f"{DATA_FILE}: 'multi' must be a non-empty list")
    out: list[NolimaChain] = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise ProbeError(f"{DATA_FILE}: multi item {i} is not an object")
        where = f"{DATA_FILE}: multi item {e.get('id', i)!r}"
        facts = _strings(e, "facts", where, 2, 4)
        chain = NolimaChain(
            id=_string(e, "id", where),
            facts=facts,
            question=_string(e, "question", where),
            links=_strings(e, "links", where, len(facts), len(facts)),
            answers=_strings(e, "answers", where),
            distractors=_strings(e, "distractors", where, 0),
            exclude=_strings(e, "exclude", where),
        )
        slots = _CHAIN_SLOTS[: len(facts)]
        _check_slots((*chain.facts, *chain.answers, *chain.distractors), slots, where)
        _check_slots((chain.question, *chain.links), frozenset(), where)
        out.append(chain)
    if len({x.id for x in out}) != len(out):
        raise ProbeError(f"{DATA_FILE}: multi item ids repeat")
    return tuple(out)


@lru_cache(maxsize=1)
def _document() -> dict[str, Any]:
    doc = json.loads((resources.files("litm") / "data" / DATA_FILE).read_text(encoding="utf-8"))
    if not isinstance(doc, dict):
        raise ProbeError(f"{DATA_FILE}: expected a JSON object")
    return doc


def load_items() -> tuple[NolimaItem, ...]:
    """The bundled single-needle items, in file order.

    Example:
        >>> items = load_items()
        >>> len(items) >= 40, items[0].link
        (True, 'The Semper Opera is in Dresden.')
    """
    return parse_items(_document())


def load_chains() -> tuple[NolimaChain, ...]:
    """The bundled multi-needle chains (2-4 facts each), in file order.

    Example:
        >>> sorted({len(c.facts) for c in load_chains()})
        [2, 3, 4]
    """
    return parse_chains(_document())


def _names(rng: random.Random, k: int) -> list[str]:
    """k distinct invented names; distinct case-insensitively, and none inside another (substring scoring)."""
    names: list[str] = []
    while len(names) < k:
        w = invented_word(rng)
        if not any(w.lower() in n.lower() or n.lower() in w.lower() for n in names):
            names.append(w)
    return names


class NolimaTask(HaystackTask):
    """One fact about an invented person; the question names neither the person nor any word of the fact.

    :class:`NolimaLiteralTask` (``nolima-literal``) asks the same fact in the needle's own words: the control
    that tells lexical matching from the one hop of reasoning.
    """

    name = "nolima"
    literal: ClassVar[bool] = False

    def instance(self, seed: int, depth: float, depths: Sequence[float]) -> TaskInstance:
        items = load_items()
        item = items[(seed * _STRIDE) % len(items)]
        # One rng for both wordings, so nolima and nolima-literal share names, needles and filler.
        (person,) = _names(random.Random(f"nolima-{seed}"), 1)
        question = item.literal if self.literal else item.question
        return TaskInstance(
            task=self.name,
            question="Question: " + question,
            answers=tuple(a.format(name=person) for a in item.answers),
            needles=((depth, item.needle.format(name=person)),),
            exclude=(person, *item.exclude),
            params={"seed": seed, "item": item.id},
        )


class NolimaLiteralTask(NolimaTask):
    """``nolima-literal``: the ``nolima`` needles and names, asked in the needles' own words."""

    name = "nolima-literal"
    literal = True


class NolimaMultiTask(HaystackTask):
    """A chain of 2-4 facts about invented people; the answer is the first person, the others are wrong items.

    The fact naming the answer goes at the probed depth; the others at seeded depths spread over the
    context (the same for every depth of a trial), in a seeded order.
    """

    name = "nolima-multi"

    def instance(self, seed: int, depth: float, depths: Sequence[float]) -> TaskInstance:
        chains = load_chains()
        chain = chains[(seed * _STRIDE) % len(chains)]
        rng = random.Random(f"nolima-multi-{seed}")
        people = _names(rng, len(chain.facts))
        slots = dict(zip(_CHAIN_SLOTS, people, strict=False))
        others = [round(rng.random(), 3) for _ in chain.facts[1:]]
        facts = [f.format(**slots) for f in chain.facts]
        return TaskInstance(
            task=self.name,
            question="Question: " + chain.question,
            answers=tuple(a.format(**slots) for a in chain.answers),
            needles=tuple(zip((depth, *others), facts, strict=True)),
            distractors=tuple(d.format(**slots) for d in chain.distractors),
            exclude=(*people, *chain.exclude),
            params={"seed": seed, "item": chain.id},
        )
