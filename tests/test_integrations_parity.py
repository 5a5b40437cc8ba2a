"""Parity with the frameworks' own reorderers, n = 0..20, with and without scores: where litm's components equal
them (their migration settings) and where they deliberately differ.

The reference orders come from the real packages: LangChain's ``LongContextReorder`` (langchain-community),
LlamaIndex's ``LongContextReorder`` (llama-index-core) and Haystack's ``LostInTheMiddleRanker`` (haystack-ai).

======================= ===================================== ==============================================
framework               equal (migration setting)             deliberately different
======================= ===================================== ==============================================
LangChain               ``LitmReorder(strategy="langchain")``  the default (``pyramid``) keeps rank 1 last for
                        for every n, scores or not             every n (theirs flips it to the front for odd
                                                              n); ``rank_by="auto"`` ranks by score when every
                                                              document has one (theirs ignores scores)
LlamaIndex              ``LitmReorder(strategy="langchain")``  unscored nodes: theirs counts None as 0 and reads
                        with distinct scores                   the list worst first, litm reads it best first;
                                                              ``rank_by="score"`` refuses a missing score
Haystack                ``LitmRanker(placement=HS_EXACT)``     the default ranks by score when every document
                        (``"edges"``, ``min_docs=0``), scores  has one (theirs trusts the input order); a token
                        or not, when the input is in score     budget instead of an overshooting word count
                        order
======================= ===================================== ==============================================
"""

from __future__ import annotations

import random

import pytest
from haystack import Document as HaystackDocument
from haystack.components.rankers import LostInTheMiddleRanker
from langchain_community.document_transformers import LongContextReorder
from langchain_core.documents import Document
from llama_index.core.postprocessor import LongContextReorder as LlamaLongContextReorder
from llama_index.core.schema import NodeWithScore, TextNode

from litm.budget._counting import as_counter
from litm.errors import InvalidScoreError
from litm.integrations import haystack as hs
from litm.integrations import langchain as lc
from litm.integrations import llamaindex as li
from litm.placement import PlacementOptions

N = range(21)
#: Haystack's migration setting: the components' default placement (by score when every document has one, a
#: repeated id kept once) with edges and no lower bound, as LostInTheMiddleRanker places.
HS_EXACT = PlacementOptions("edges", rank_by="auto", dedup="id", min_docs=0)


def _scores(n: int, seed: int) -> list[float]:
    """``n`` distinct scores in [0.05, 0.95], shuffled: the input order is not the score order."""
    scores = [round(0.05 + 0.9 * i / max(n, 1), 6) for i in range(n)]
    random.Random(seed).shuffle(scores)
    return scores


# -- LangChain ----------------------------------------------------------------------------------------------


def _lc_docs(n: int, scores: list[float] | None = None) -> list[Document]:
    meta = [{} if scores is None else {"relevance_score": s} for s in (scores or [None] * n)]
    return [Document(page_content=f"d{i + 1}", metadata=m) for i, m in enumerate(meta)]


def _text(docs: object) -> list[str]:
    return [d.page_content for d in docs]  # type: ignore[attr-defined]


@pytest.mark.parametrize("n", N)
def test_langchain_parity_mode_equals_long_context_reorder_without_and_with_scores(n: int) -> None:
    for docs in (_lc_docs(n), _lc_docs(n, _scores(n, n))):
        theirs = _text(LongContextReorder().transform_documents(docs))
        assert _text(lc.LitmReorder(strategy="langchain").transform_documents(docs)) == theirs
        assert _text(lc.LitmReorder(strategy="langchain").invoke(docs)) == theirs
        assert _text(lc.LitmReorder(strategy="langchain").compress_documents(docs, "q")) == theirs


@pytest.mark.parametrize("n", N)
def test_langchain_default_keeps_rank_1_last_where_long_context_reorder_flips_it(n: int) -> None:
    docs = _lc_docs(n)
    theirs = _text(LongContextReorder().transform_documents(docs))
    ours = _text(lc.LitmReorder().transform_documents(docs))
    if n < 4:  # below min_docs the rank order is kept (theirs reorders 2 and 3 documents)
        assert ours == [f"d{i + 1}" for i in range(n)]
    elif n % 2 == 1:  # odd n: theirs is edges, and so is the default (auto without a profile)
        assert ours == theirs and ours[0] == "d1" and ours[-1] == "d2"
    else:  # even n: theirs puts rank 1 last, auto's edges keeps it first for every n: the mirror image
        assert ours == theirs[::-1] and ours[0] == "d1" and theirs[-1] == "d1"


@pytest.mark.parametrize("n", N)
def test_langchain_auto_ranks_by_score_where_long_context_reorder_ignores_scores(n: int) -> None:
    scores = _scores(n, n + 100)
    docs = _lc_docs(n, scores)
    by_score = sorted(docs, key=lambda d: -d.metadata["relevance_score"])
    ours = _text(lc.LitmReorder(placement=PlacementOptions("langchain", rank_by="auto")).transform_documents(docs))
    assert ours == _text(LongContextReorder().transform_documents(by_score))


# -- LlamaIndex ---------------------------------------------------------------------------------------------


def _nodes(scores: list[float | None]) -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(text=f"t{i}", id_=f"n{i}"), score=s) for i, s in enumerate(scores)]


def _ids(nodes: object) -> list[str]:
    return [n.node.node_id for n in nodes]  # type: ignore[attr-defined]


@pytest.mark.parametrize("n", N)
def test_llamaindex_parity_mode_equals_long_context_reorder_with_distinct_scores(n: int) -> None:
    nodes = _nodes(list(_scores(n, n)))
    theirs = _ids(LlamaLongContextReorder().postprocess_nodes(list(nodes)))
    ours = li.LitmReorder(strategy="langchain").postprocess_nodes(list(nodes))
    assert _ids(ours) == theirs and all(any(o is x for x in nodes) for o in ours)


@pytest.mark.parametrize("n", N)
def test_llamaindex_unscored_nodes_are_read_best_first_where_theirs_reads_them_worst_first(n: int) -> None:
    nodes = _nodes([None] * n)
    theirs = _ids(LlamaLongContextReorder().postprocess_nodes(list(nodes)))
    ours = _ids(li.LitmReorder(strategy="langchain").postprocess_nodes(list(nodes)))
    # Theirs counts every missing score as 0, and its ascending stable sort leaves the list as given: the
    # retriever's top hit is read as the weakest. litm reads the list as ranked, best first.
    assert ours == _ids(LlamaLongContextReorder().postprocess_nodes(nodes[::-1]))
    assert (ours == theirs) == (n < 2)
    if n:
        with pytest.raises(InvalidScoreError, match="no item has a score"):
            li.LitmReorder(placement=PlacementOptions(rank_by="score")).postprocess_nodes(nodes)


def test_llamaindex_a_missing_score_is_not_read_as_zero() -> None:
    nodes = _nodes([0.9, None, -0.4, 0.2])
    theirs = _ids(LlamaLongContextReorder().postprocess_nodes(list(nodes)))
    assert theirs == ["n3", "n2", "n1", "n0"]  # the unscored n1 ranked above the scored n2 (-0.4 < 0)
    assert _ids(li.LitmReorder(strategy="langchain").postprocess_nodes(nodes)) == ["n1", "n3", "n2", "n0"]
    with pytest.raises(InvalidScoreError, match=r"item 1 \('n1'\) has no score"):
        li.LitmReorder(placement=PlacementOptions("langchain", rank_by="score")).postprocess_nodes(nodes)


# -- Haystack -----------------------------------------------------------------------------------------------


def _hs_docs(scores: list[float | None]) -> list[HaystackDocument]:
    return [HaystackDocument(content=f"d{i + 1}", id=f"d{i + 1}", score=s) for i, s in enumerate(scores)]


def _hs_ids(docs: list[HaystackDocument]) -> list[str]:
    return [d.id for d in docs]


@pytest.mark.parametrize("n", N)
def test_haystack_parity_mode_equals_lost_in_the_middle_without_and_with_scores(n: int) -> None:
    ranked = sorted(_scores(n, n), reverse=True)  # a retriever's output: best first
    for docs in (_hs_docs([None] * n), _hs_docs(list(ranked))):
        theirs = _hs_ids(LostInTheMiddleRanker().run(documents=docs)["documents"])
        ours = hs.LitmRanker(placement=HS_EXACT).run(documents=docs)["documents"]
        assert _hs_ids(ours) == theirs
        top = min(n, 3) or None
        theirs_top = _hs_ids(LostInTheMiddleRanker(top_k=top).run(documents=docs)["documents"])
        assert _hs_ids(hs.LitmRanker(placement=HS_EXACT.replace(top_k=top)).run(documents=docs)["documents"]) == (
            theirs_top
        )


@pytest.mark.parametrize("n", N)
def test_haystack_default_ranks_by_score_where_lost_in_the_middle_trusts_the_input_order(n: int) -> None:
    docs = _hs_docs(list(_scores(n, n + 7)))
    theirs_sorted = _hs_ids(
        LostInTheMiddleRanker().run(documents=sorted(docs, key=lambda d: -(d.score or 0)))["documents"]
    )
    ours = _hs_ids(hs.LitmRanker(placement=HS_EXACT).run(documents=docs)["documents"])
    assert ours == theirs_sorted  # litm ranks by the scores; theirs would need the input sorted first
    as_given = _hs_ids(LostInTheMiddleRanker().run(documents=docs)["documents"])
    assert _hs_ids(hs.LitmRanker(placement=HS_EXACT.replace(rank_by="input")).run(documents=docs)["documents"]) == (
        as_given
    )
    if n >= 4:  # the default, auto without a profile, is edges: LostInTheMiddleRanker's order, by score
        assert _hs_ids(hs.LitmRanker().run(documents=docs)["documents"]) == theirs_sorted


def test_haystack_duplicates_keep_the_highest_score_like_lost_in_the_middle() -> None:
    docs = [*_hs_docs([0.3, 0.8, 0.5]), HaystackDocument(content="d1", id="d1", score=0.9)]
    theirs = LostInTheMiddleRanker().run(documents=sorted(docs, key=lambda d: -(d.score or 0)))["documents"]
    ours = hs.LitmRanker(placement=HS_EXACT).run(documents=docs)["documents"]
    assert [(d.id, d.score) for d in ours] == [(d.id, d.score) for d in theirs] == [
        ("d1", 0.9), ("d3", 0.5), ("d2", 0.8)
    ]  # fmt: skip


def test_haystack_word_threshold_overshoots_where_the_token_budget_holds() -> None:
    # LostInTheMiddleRanker keeps the document that crosses its word threshold: 50 words asked, 60 returned.
    docs = [HaystackDocument(content=" ".join(["word"] * 20), id=f"d{i}", score=1 - i / 10) for i in range(6)]
    theirs = LostInTheMiddleRanker(word_count_threshold=50).run(documents=docs)["documents"]
    assert sum(len(d.content.split()) for d in theirs) == 60
    # The trimmer counts the whole prompt with the model's tokenizer and never goes over.
    trimmer = hs.LitmTrimmer(tokenizer="openai:gpt-4o", max_input_tokens=200)
    out = trimmer.run(documents=docs, query="Which?")
    prompt = hs.LitmPromptBuilder(strategy=trimmer.placing.strategy).run(query="Which?", documents=out["documents"])
    sent = [{"role": m.role.value, "content": m.text} for m in prompt["prompt"]]
    assert as_counter("openai:gpt-4o").count_request({"messages": sent}, "openai-chat").tokens <= 200
    assert 0 < len(out["documents"]) < 6 and out["dropped"]
