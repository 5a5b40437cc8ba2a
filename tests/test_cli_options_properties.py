"""Properties of the probe and bench option parsers: whatever the text, a value or one typed error.

* ``--strategy`` (:func:`litm.cli._options.check_strategy`): a registered name comes back, anything else is a
  usage error; every choice the shared enums offer is one the library accepts.
* ``litm probe --lengths`` (:func:`litm.probe._grid.parse_lengths`): sorted unique whole token counts >= 16,
  exact for ``k`` (1.5k is 1536), or a :class:`~litm.probe.ProbeError`; never a float cut to an int.
* ``litm probe --depths`` (:func:`litm.probe._grid.parse_depths`): sorted unique depths in [0, 1], at most
  :data:`~litm.probe._grid.MAX_DEPTHS` of a grid, or a ``ProbeError``.
* ``litm bench --k`` and friends (``_ints``, ``_split`` of :mod:`litm.cli._bench`): integers or a usage error.
"""

from __future__ import annotations

import math
import time

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st

from litm.cli._bench import _ints, _split
from litm.cli._options import FormatOpt, LangOpt, QuestionPosOpt, ScoreAsOpt, StyleOpt, check_strategy
from litm.errors import PromptError
from litm.placement._registry import strategy_names
from litm.probe import ProbeError
from litm.probe._grid import MAX_DEPTHS, parse_depths, parse_lengths
from litm.prompt import AnchorOptions, Layout, Wording, build_prompt

ANY_TEXT = st.text(st.characters(codec=None), max_size=30)
LENGTH_WORDS = st.one_of(
    st.integers(min_value=0, max_value=10**7).map(str),
    st.builds(lambda n, d: f"{n}.{d}", st.integers(0, 99), st.integers(0, 999)),
    st.builds(lambda n, k: f"{n}{k}", st.decimals(0, 64, places=3, allow_nan=False, allow_infinity=False),
              st.sampled_from(["k", "K", " k"])),
    ANY_TEXT,
)  # fmt: skip


@given(st.one_of(st.sampled_from(strategy_names()), ANY_TEXT))
def test_check_strategy_returns_a_registered_name_or_a_usage_error(name: str) -> None:
    if name in strategy_names():
        assert check_strategy(name) == name
    else:
        with pytest.raises(typer.BadParameter, match="is not a placement strategy"):
            check_strategy(name)
    assert check_strategy(None) is None


@pytest.mark.parametrize("fmt", [m.value for m in FormatOpt])
@pytest.mark.parametrize("lang", [m.value for m in LangOpt])
def test_every_format_and_language_offered_is_accepted(fmt: str, lang: str) -> None:
    prompt = build_prompt(["Paris is in France.", "Lyon too."], "Where is Paris?", wording=Wording(lang=lang))
    if fmt == "jinja":  # the one format that needs the model's chat template (--chat-template), and says so
        with pytest.raises(PromptError, match="needs a chat template"):
            prompt.render(fmt)
        return
    assert prompt.render(fmt)


@pytest.mark.parametrize("style", [m.value for m in StyleOpt])
@pytest.mark.parametrize("score_as", [m.value for m in ScoreAsOpt])
@pytest.mark.parametrize("position", [m.value for m in QuestionPosOpt])
def test_every_anchor_and_layout_choice_offered_is_accepted(style: str, score_as: str, position: str) -> None:
    docs = [{"id": "a", "text": "Paris is in France.", "score": 2.0}, {"id": "b", "text": "Lyon.", "score": 1.0}]
    # "auto" is the command's own choice (the model's anchors); its fields then take AnchorOptions' style.
    fields = {"score_as": score_as} if style == "auto" else {"style": style, "score_as": score_as}
    prompt = build_prompt(docs, "Where is Paris?", anchors=AnchorOptions(**fields),  # type: ignore[arg-type]
                          layout=Layout(question_position=position))  # fmt: skip
    assert "Paris is in France." in prompt.render("text")


@settings(max_examples=300)
@given(st.lists(LENGTH_WORDS, max_size=5), st.sampled_from([",", " ", ", ", ",,"]))
def test_lengths_are_whole_sorted_token_counts_or_a_probe_error(words: list[str], sep: str) -> None:
    text = sep.join(words)
    try:
        lengths = parse_lengths(text)
    except ProbeError as exc:
        assert "\n" not in str(exc)
        return
    assert lengths == tuple(sorted(set(lengths))) and all(isinstance(n, int) and n >= 16 for n in lengths)


@given(st.lists(st.integers(min_value=16, max_value=10**9), min_size=1, max_size=6),
       st.lists(st.integers(min_value=1, max_value=10**6), max_size=3))  # fmt: skip
def test_lengths_given_in_tokens_and_in_k_are_read_exactly(tokens: list[int], kilo: list[int]) -> None:
    halves = [f"{k // 2}{'.5' if k % 2 else ''}k" for k in kilo]  # k halves of 1024 tokens, "1.5k" among them
    text = ",".join([*map(str, tokens), *halves])
    assert parse_lengths(text) == tuple(sorted({*tokens, *(k * 512 for k in kilo)}))


@given(st.integers(min_value=16, max_value=10**6), st.integers(min_value=1, max_value=9))
def test_a_fractional_length_is_refused_not_cut(whole: int, tenth: int) -> None:
    # "16.9" used to be 16 tokens and a 400-digit length an OverflowError.
    with pytest.raises(ProbeError, match="not a whole number of tokens"):
        parse_lengths(f"{whole}.{tenth}")
    with pytest.raises(ProbeError, match="bad length"):
        parse_lengths("9" * 400)


@settings(max_examples=300)
@given(st.one_of(
    ANY_TEXT,
    st.builds(lambda kind, n: f"{kind}:{n}", st.sampled_from(["linear", "edge", "edge-dense", "bogus"]),
              st.integers(min_value=-5, max_value=10**15)),
    st.lists(st.one_of(st.floats(), st.integers(-2, 2)), max_size=6).map(lambda xs: ",".join(map(str, xs))),
))  # fmt: skip
def test_depths_are_sorted_unique_points_in_0_1_or_a_probe_error(text: str) -> None:
    start = time.perf_counter()
    try:
        depths = parse_depths(text)
    except ProbeError as exc:
        assert "\n" not in str(exc)
        return
    finally:
        assert time.perf_counter() - start < 1.0, "a depth grid is parsed, not enumerated without bound"
    assert depths and depths == tuple(sorted(set(depths))) and len(depths) <= MAX_DEPTHS
    assert all(math.isfinite(d) and 0.0 <= d <= 1.0 for d in depths)


@given(st.integers(min_value=2, max_value=MAX_DEPTHS), st.sampled_from(["linear", "edge"]))
def test_a_depth_grid_spans_0_to_1_symmetrically(n: int, kind: str) -> None:
    try:
        depths = parse_depths(f"{kind}:{n}")
    except ProbeError as exc:
        # edge:224 used to give 224 depths with 0.0 twice (one cell measured as two); now it says so.
        assert kind == "edge" and n > 200 and "repeats depths" in str(exc)
        return
    assert len(depths) == n and depths[0] == 0.0 and depths[-1] == 1.0
    # Each depth is rounded to 4 decimals, so a point and its mirror may differ by one unit of the last decimal.
    assert all(abs(a - (1 - b)) <= 1e-4 + 1e-9 for a, b in zip(depths, reversed(depths), strict=True))
    with pytest.raises(ProbeError, match="more than"):
        parse_depths(f"{kind}:{MAX_DEPTHS + n}")


@given(st.lists(st.one_of(ANY_TEXT, st.lists(st.integers(), max_size=4).map(lambda xs: ",".join(map(str, xs)))),
                max_size=4))  # fmt: skip
def test_bench_integer_lists_are_integers_or_a_usage_error(values: list[str]) -> None:
    parts = _split(values)
    assert all(p and p == p.strip() for p in parts)
    try:
        ints = _ints(values)
    except typer.BadParameter:
        return
    assert len(ints) == len(parts) and all(isinstance(i, int) for i in ints)
