"""Teacher-forced log-probabilities: how likely a model finds a given continuation of a prompt.

A continuation (a gold answer) is appended to the prompt and the model reads both in one forward pass; the
log-probability of each continuation token given everything before it is read off that pass, so nothing is
sampled and the answer is never generated. :class:`Logprobs` carries the per-token values (natural log);
``mean`` is the per-token average that the benchmark's likelihood metric reports.

Backends that can do it have ``continuation_logprobs(prompt, continuations)``: local llama.cpp models
(:class:`~litm.models.LocalModel`) and OpenAI-compatible servers that echo prompt log-probabilities on
``/completions`` (:class:`~litm.models.OpenAIModel`, after a consistency check). :func:`supports_logprobs`
says whether a model has it.

>>> lp = Logprobs("Paris", ("Par", "is"), (-0.5, -0.1), prompt_tokens=12)
>>> round(lp.total, 2), round(lp.mean, 2), lp.n
(-0.6, -0.3, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from litm.models._base import PromptLike

__all__ = ["Logprobs", "ScoresContinuations", "supports_logprobs"]


@dataclass(frozen=True)
class Logprobs:
    """The log-probability (natural log) of each token of ``continuation`` after a prompt of ``prompt_tokens``."""

    continuation: str
    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]
    prompt_tokens: int
    latency_s: float = 0.0

    @property
    def n(self) -> int:
        """How many tokens the continuation has in this model's tokenizer."""
        return len(self.logprobs)

    @property
    def total(self) -> float:
        """The continuation's log-probability: the sum over its tokens."""
        return float(sum(self.logprobs))

    @property
    def mean(self) -> float:
        """The mean per-token log-probability (comparable across answers of different token lengths)."""
        return self.total / self.n if self.n else 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, with ``total`` and ``mean``."""
        return {**asdict(self), "total": self.total, "mean": self.mean}


@runtime_checkable
class ScoresContinuations(Protocol):
    """A model that can score continuations of a prompt (see the module docstring)."""

    def continuation_logprobs(self, prompt: PromptLike, continuations: Sequence[str]) -> list[Logprobs]: ...


def supports_logprobs(model: object) -> bool:
    """Whether ``model`` can score continuations (its backend may still refuse a given prompt form).

    >>> from litm.models import load_model
    >>> supports_logprobs(load_model("anthropic:claude-haiku-4-5"))
    False
    """
    return isinstance(model, ScoresContinuations)
