"""Properties of model spec strings (:func:`litm.models.parse_spec`): any text is a spec or a typed error.

* Whatever the text (control characters, unpaired surrogates, a colon anywhere, any case), ``parse_spec``
  returns a :class:`~litm.models.ModelSpec` or raises :class:`~litm.errors.UnknownModelSpecError`.
* A spec it accepts prints back to a spec that parses to the same value, and holds no control character.
* Every documented form, generated with arbitrary model names, hosts and ports, parses to its parts.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litm.errors import UnknownModelSpecError
from litm.models import ModelSpec
from litm.models._embedded import DEFAULT_ALIAS, EMBEDDED
from litm.models._spec import parse_spec

SCHEMES = ["local", "openai", "openai-compatible", "anthropic", "LOCAL", "OpenAI", "bogus", "", " local"]
#: Text from every Unicode category, control characters and unpaired surrogates included.
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
PIECES = st.one_of(ANY_TEXT, st.sampled_from(["/", "@", ":", "http://", "https://", ".gguf", "~", "[::1", ":99999"]))
SPECS = st.one_of(
    ANY_TEXT,
    st.builds(lambda s, sep, rest: s + sep + "".join(rest), st.sampled_from(SCHEMES), st.sampled_from([":", ""]),
              st.lists(PIECES, max_size=5)),
)  # fmt: skip
#: A model name as providers spell them: printable, without spaces or line breaks.
NAMES = st.text(st.characters(exclude_categories=("Cc", "Cs", "Zs", "Zl", "Zp")), min_size=1, max_size=30)


def _parse(text: str) -> ModelSpec | None:
    try:
        return parse_spec(text)
    except UnknownModelSpecError as exc:
        assert "\n" not in str(exc), "an error is one line"
        return None


@settings(max_examples=300)
@given(SPECS)
def test_any_text_is_a_spec_or_an_unknown_spec_error(text: str) -> None:
    spec = _parse(text)
    if spec is None:
        return
    printed = str(spec)
    assert not any(unicodedata.category(c) in ("Cc", "Cs") for c in printed), printed
    assert parse_spec(printed) == spec


@given(st.one_of(st.none(), st.integers(), st.binary(), st.lists(st.text())))
def test_a_spec_that_is_not_a_string_is_an_unknown_spec_error(value: object) -> None:
    with pytest.raises(UnknownModelSpecError):
        parse_spec(value)  # type: ignore[arg-type]


@given(st.sampled_from(["openai", "anthropic"]), NAMES, st.sampled_from(["", " ", "  "]))
def test_a_provider_spec_keeps_the_model_name(scheme: str, name: str, pad: str) -> None:
    spec = parse_spec(f"{pad}{scheme.upper()}:{pad}{name}{pad}")
    assert spec == ModelSpec(scheme, name.strip()) and spec.base_url is None


@given(
    scheme=st.sampled_from(["http", "https"]),
    host=st.one_of(st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z]{2,5})?", fullmatch=True),
                   st.ip_addresses(v=4).map(str), st.ip_addresses(v=6).map(lambda a: f"[{a}]")),
    port=st.one_of(st.none(), st.integers(min_value=0, max_value=65535)),
    path=st.sampled_from(["", "/v1", "/api/v1/"]),
    name=NAMES.filter(lambda n: "@" not in n),  # the last "@" ends the URL: a model name cannot hold one
)  # fmt: skip
def test_an_openai_compatible_spec_parses_to_its_url_and_model(
    scheme: str, host: str, port: int | None, path: str, name: str
) -> None:
    url = f"{scheme}://{host}{'' if port is None else f':{port}'}{path}"
    spec = parse_spec(f"openai-compatible:{url}@{name}")
    assert spec == ModelSpec("openai-compatible", name.strip(), url.rstrip("/"))
    assert parse_spec(str(spec)) == spec


@given(port=st.one_of(st.integers(min_value=65536), st.integers(max_value=-1).map(str),
                      st.from_regex(r"[a-z]{1,5}", fullmatch=True)))  # fmt: skip
def test_a_server_url_with_an_unreadable_port_is_refused(port: object) -> None:
    with pytest.raises(UnknownModelSpecError, match="malformed"):
        parse_spec(f"openai-compatible:http://127.0.0.1:{port}/v1@model")


@given(st.sampled_from(sorted(EMBEDDED)))
def test_embedded_aliases_and_the_default(alias: str) -> None:
    spec = parse_spec(f"local:{alias}")
    assert spec.scheme == "local" and spec.target == ("" if alias == DEFAULT_ALIAS else alias)
    assert not spec.is_path and parse_spec(str(spec)) == spec


@given(st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=20).filter(lambda s: s.strip()))
def test_a_gguf_path_is_a_path_spec(stem: str) -> None:
    spec = parse_spec(f"local:models/{stem.strip()}.gguf")
    assert spec.is_path and spec.target == f"models/{stem.strip()}.gguf"


@pytest.mark.parametrize("bad", ["openai:gpt\n4", "openai:a\x00b", "anthropic:\tclaude", "local:x\udcff.gguf",
                                 "openai-compatible:http://h/v1@m\x1b[31m"])  # fmt: skip
def test_control_and_unpaired_characters_are_refused(bad: str) -> None:
    # They were accepted and carried into a request's model id (or a file name).
    with pytest.raises(UnknownModelSpecError, match="control or unpaired character"):
        parse_spec(bad)
