"""The public surfaces of litm.models, litm.code, litm.integrations and litm.tokens (issue 43): small, deliberate.

Each package's ``__all__`` is its API; what it no longer exports lives in its private modules, where litm's other
packages and the tests import it from. The figures are the issue's goals for these packages.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from types import ModuleType

import pytest

import litm.code
import litm.integrations
import litm.models
import litm.models.tokenizers
import litm.tokens
from litm.errors import LitmError

ROOT = Path(__file__).resolve().parents[1]


def _non_error(module: ModuleType) -> set[str]:
    names = set(module.__all__)
    return {n for n in names if not (isinstance(v := getattr(module, n), type) and issubclass(v, LitmError))}


def test_each_package_exports_only_its_api() -> None:
    assert _non_error(litm.models) == {
        "Completion", "GenerationRequest", "Model", "ModelSpec", "backends", "complete_many", "load_model",
        "register_backend", "unregister_backend",
    }  # fmt: skip
    assert _non_error(litm.models.tokenizers) == {"TokenCount", "Tokenizer", "count_request", "safety_margin"}
    assert _non_error(litm.code) == {"CodeContext", "CodeOptions", "code_context"}
    assert _non_error(litm.integrations) == {"Budget"}
    assert set(litm.tokens.__all__) == {
        "TokenCount", "Tokenizer", "count_request", "count_tokens", "get_tokenizer", "safety_margin"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("litm.models._embedded", ["EMBEDDED", "cache_dir"]),
        ("litm.models._local", ["LocalModel", "unload_all"]),
        ("litm.models._openai_backend", ["OpenAIModel"]),
        ("litm.models._anthropic_backend", ["AnthropicModel"]),
        ("litm.models._spec", ["parse_spec"]),
        ("litm.models._base", ["PromptLike"]),
        ("litm.models.tokenizers._base", ["TOOLS_OVERHEAD_TOKENS", "TOOL_CALL_TOKENS", "UNSTATED_MARGIN"]),
        ("litm.models.tokenizers._bpe", ["ENCODING_SHA256", "OPENAI_TOKENS_PER_MESSAGE", "OpenAITokenizer"]),
        ("litm.models.tokenizers._estimate", ["ANTHROPIC_CHARS_PER_TOKEN", "ESTIMATE_MARGIN", "EstimateTokenizer"]),
        ("litm.code._context", ["make_workspace"]),
        ("litm.code._result", ["render_docs"]),
        ("litm.code._pieces", ["CodePiece"]),
        ("litm.integrations._steps", ["Assembled", "Trimmed", "assemble", "reorder", "trim"]),
        ("litm.integrations._compression", ["METADATA_KEY", "Compressing", "Compression"]),
        ("litm.integrations._options", ["optional_budget"]),
    ],
)
def test_what_a_package_no_longer_exports_lives_in_its_private_module(module: str, names: list[str]) -> None:
    found = importlib.import_module(module)
    package = importlib.import_module(module.rpartition("._")[0])
    for name in names:
        assert hasattr(found, name), f"{module}.{name}"
        assert name not in package.__all__, f"{package.__name__} still exports {name}"


@pytest.mark.parametrize(
    "qualname", ["litm.code:code_context", "litm.integrations.llamaindex:LitmSynthesizer"]
)
def test_no_public_callable_takes_more_than_12_parameters(qualname: str) -> None:
    module, _, name = qualname.partition(":")
    target = getattr(importlib.import_module(module), name)
    function = target.__init__ if inspect.isclass(target) else target
    params = [p for p in inspect.signature(function).parameters if p not in ("self", "cls")]
    assert len(params) <= 12, params


def test_any_stays_within_the_issues_budget_for_these_packages() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import api_metrics
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    counts = api_metrics.any_uses()
    mine = ("litm.models", "litm.code", "litm.integrations", "litm.util", "litm.tokens")
    assert sum(counts.get(p, 0) for p in mine) <= 55, {p: counts.get(p, 0) for p in mine}
