"""The placement fast path (issue 18) gives the full path's results and errors, on many generated inputs."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document

import litm
import litm.placement._place as strategy_module
from litm.placement import Doc, PlacementPlan
from litm.placement._profile import PositionProfile

PROFILE = PositionProfile.from_weights([0.82, 0.61, 0.55, 0.58, 0.9], name="measured-like")

scores = st.one_of(
    st.floats(min_value=-5, max_value=5, allow_nan=False),
    st.sampled_from([math.nan, math.inf, 1, None, "0.5", True]),
)
ids = st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d", ""]), st.integers(0, 3))
texts = st.one_of(st.text(max_size=6), st.sampled_from([None, 3]))


@st.composite
def item_lists(draw: Any) -> list[Any]:
    kind = draw(st.sampled_from(["str", "dict", "doc", "langchain", "mixed"]))
    n = draw(st.integers(0, 12))
    clean = draw(st.booleans())  # half the lists are clean, so the fast path is taken often
    out: list[Any] = []
    for i in range(n):
        k = draw(st.sampled_from(["str", "dict", "doc", "langchain"])) if kind == "mixed" else kind
        score = draw(st.floats(-5, 5, allow_nan=False)) if clean else draw(scores)
        if k == "str":
            out.append(f"t{i}" if clean else draw(st.one_of(st.text(max_size=4), st.none())))
        elif k == "dict":
            d: dict[str, Any] = {"text": f"t{i}" if clean else draw(texts)}
            if clean or draw(st.booleans()):
                d["score"] = score
            if not clean and draw(st.booleans()):
                d["id"] = draw(ids)
            elif clean:
                d["id"] = f"d{i}"
            out.append(d)
        elif k == "doc":
            out.append(Doc(f"t{i}", id=f"d{i}" if clean or draw(st.booleans()) else "dup", score=score
                           if isinstance(score, float) and math.isfinite(score) else None))  # fmt: skip
        else:
            meta: dict[str, Any] = {"score": score} if clean or draw(st.booleans()) else {}
            doc_id = f"d{i}" if clean else draw(st.one_of(st.none(), st.sampled_from(["x", "y"])))
            out.append(Document(page_content=f"t{i}", metadata=meta, id=doc_id))
    if draw(st.booleans()):
        # (document, score) pairs, as vector stores return them; now and then a pair that is not one.
        pairs: list[Any] = []
        for item in out:
            score = draw(st.floats(-5, 5, allow_nan=False)) if clean else draw(scores)
            pairs.append((item, score) if clean or draw(st.booleans()) else draw(st.sampled_from(
                [[item, score], (item,), (item, score, 1), ((item, score), score)])))  # fmt: skip
        return pairs
    return out


def _outcome(items: list[Any], **options: Any) -> tuple[str, Any]:
    try:
        plan = litm.place(items, placement=litm.PlacementOptions(**options))
    except Exception as exc:  # the same error type and message on both paths is what is checked
        return "error", (type(exc), str(exc))
    return "plan", (plan.items, plan.note, plan.slots, plan.dropped, plan.profile_name, plan.to_dict())


@settings(max_examples=300, deadline=None)
@given(
    items=item_lists(),
    strategy=st.sampled_from(["pyramid", "edges", "langchain", "none", "reverse", "profile", "random"]),
    rank_by=st.sampled_from(["input", "score"]),
    higher_is_better=st.booleans(),
    dedup=st.sampled_from([None, "id", "content"]),
    top_k=st.sampled_from([None, 0, 2, 5]),
)
def test_fast_path_equals_full_path(
    items: list[Any], strategy: str, rank_by: str, higher_is_better: bool, dedup: str | None, top_k: int | None
) -> None:
    options: dict[str, Any] = {
        "strategy": strategy, "rank_by": rank_by, "higher_is_better": higher_is_better, "dedup": dedup,
        "top_k": top_k, "profile": PROFILE if strategy == "profile" else None,
    }  # fmt: skip
    fast = _outcome(items, **options)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(strategy_module, "quick_rank", lambda *a, **k: None)  # the full path: a Doc per item
        full = _outcome(items, **options)
    assert fast[0] == full[0]
    if fast[0] == "plan":
        f_items, *f_rest = fast[1]
        g_items, *g_rest = full[1]
        assert len(f_items) == len(g_items) and all(a is b for a, b in zip(f_items, g_items, strict=True))
        assert f_rest == g_rest
    else:
        assert fast == full


def test_the_fast_path_is_taken_for_clean_input_and_explains_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = [Document(page_content=f"p{i}", metadata={"score": 1 - i / 10}) for i in range(10)]
    calls: list[int] = []
    real = strategy_module.quick_rank

    def counting(*a: Any, **k: Any) -> Any:
        out = real(*a, **k)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(strategy_module, "quick_rank", counting)
    plan = litm.place(docs, "pyramid")
    assert calls == [True]
    assert isinstance(plan, PlacementPlan) and plan._explain is not None  # nothing explained yet
    assert [s.rank for s in plan.slots] == [2, 4, 6, 8, 10, 9, 7, 5, 3, 1] and plan._explain is None
    assert [s.relevance for s in plan.slots][-1] == 1.0
