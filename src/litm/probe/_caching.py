"""Provider prompt caching for a probe: where each request's cache breakpoints go, and what it bills.

The prompts of one trial share their text up to their needles (the trie of :mod:`litm.probe._schedule`),
and a provider that caches prompt prefixes bills a shared prefix at its cached-input rate:

* **Anthropic** caches only what a request marks (``cache_control`` breakpoints, at most four a request),
  and only prefixes of at least the model's minimum (1,024 to 4,096 tokens, by model); it bills cache
  reads at about 0.1x the input rate and writes at 1.25x. The plan: each request reads the longest prefix
  an earlier request of its trial wrote, and writes the prefixes later requests will read (the points
  where their text leaves its own), at most three beyond its read point, so nothing is written twice and
  nothing that no later request reads is written at all.
* **OpenAI** caches every request's prefix by itself (from 1,024 tokens, in steps of 128) and bills reads
  at its cached rate, with no write premium: the plan marks nothing. Shared prefixes have to be
  byte-identical and first, which they are: filler comes before the needle, the question last.

Remote runs go trial by trial and, within a trial, one request after another (trials run concurrently),
so a prefix is in the cache before the next request of its trial is sent. The plan is also the dry-run
estimate: expected cache reads and writes per request, priced in :mod:`litm.probe._cost`. A run's own
cost report prices what the provider reported (``Completion.cached_tokens`` / ``cache_write_tokens``).

Example:
    >>> policy = CachePolicy("anthropic", min_tokens=2, step=1, explicit=True)
    >>> prompts = ["aaaa bbbb X cccc", "aaaa bbbb cccc Y", "aaaa bbbb cccc dddd"]
    >>> [(c.read, c.breakpoints) for c in plan_cache(prompts, lambda s: len(s.split()), policy)]
    [(0, (10,)), (10, (10, 15)), (15, (15,))]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from litm.models._base import Model
from litm.models.tokenizers._estimate import EstimateTokenizer
from litm.probe._schedule import lcp

__all__ = ["CachePolicy", "PlannedCall", "anthropic_min_tokens", "cache_policy", "plan_cache", "planning_count"]

#: Anthropic's minimum cacheable prefix by model-name prefix (its prompt-caching documentation); other
#: Claude models: 1,024. Below the minimum nothing is cached and nothing fails: the request bills in full.
_ANTHROPIC_MIN = (
    ("claude-opus-4-5", 4096),
    ("claude-opus-4-6", 4096),
    ("claude-haiku-4-5", 4096),
    ("claude-opus-4-7", 2048),
    ("claude-sonnet-4-6", 2048),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
    ("claude-haiku-3", 2048),
)
_OPENAI_MIN, _OPENAI_STEP = 1024, 128


def anthropic_min_tokens(model: str) -> int:
    """The smallest prefix Anthropic caches for ``model``.

    >>> anthropic_min_tokens("claude-haiku-4-5-20251001"), anthropic_min_tokens("claude-sonnet-4-5")
    (4096, 1024)
    """
    name = model.lower()
    return next((n for prefix, n in _ANTHROPIC_MIN if name.startswith(prefix)), 1024)


@dataclass(frozen=True)
class CachePolicy:
    """How a provider caches prompt prefixes: who marks them, the smallest one, and the step of reads."""

    provider: str
    min_tokens: int
    step: int
    explicit: bool
    max_breakpoints: int = 4

    def cached(self, tokens: int) -> int:
        """Tokens of a shared prefix of ``tokens`` tokens that the provider serves from its cache."""
        if tokens < self.min_tokens:
            return 0
        return self.min_tokens + (tokens - self.min_tokens) // self.step * self.step


def cache_policy(model: Model) -> CachePolicy | None:
    """The caching of ``model``'s provider, or None (local models reuse their own KV cache instead).

    >>> from litm.models import load_model
    >>> cache_policy(load_model("openai:gpt-4o-mini"))
    CachePolicy(provider='openai', min_tokens=1024, step=128, explicit=False, max_breakpoints=4)
    """
    if not getattr(model, "remote", False):
        return None
    scheme = str(getattr(model, "spec", "")).partition(":")[0]
    if scheme == "anthropic":
        return CachePolicy("anthropic", anthropic_min_tokens(model.name), 1, explicit=True)
    if scheme == "openai":
        return CachePolicy("openai", _OPENAI_MIN, _OPENAI_STEP, explicit=False)
    return None  # an OpenAI-compatible server: whether and how it caches is the server's


@dataclass(frozen=True)
class PlannedCall:
    """One request of the plan: its breakpoints (character offsets, Anthropic) and expected cache tokens.

    ``read`` / ``writes`` are character offsets; ``read_tokens`` / ``write_tokens`` what the provider is
    expected to bill as cache reads and cache writes.
    """

    read: int
    breakpoints: tuple[int, ...]
    read_tokens: int
    write_tokens: int


def plan_cache(prompts: Sequence[str], count: Callable[[str], int], policy: CachePolicy) -> list[PlannedCall]:
    """The cache plan of one trial's prompts, in the order they are sent (see the module docstring).

    ``count`` gives the tokens of a prompt prefix (the model's tokenizer, or its estimate).
    """
    written: list[tuple[int, int]] = []  # (prompt index, offset): prefixes some request has put in the cache
    out: list[PlannedCall] = []
    for i, text in enumerate(prompts):
        if policy.explicit:
            read = max((off for j, off in written if off <= len(text) and prompts[j][:off] == text[:off]), default=0)
        else:  # the provider caches every earlier request's prefixes by itself
            read = max((lcp(prompts[j], text) for j in range(i)), default=0)
        read_tokens = policy.cached(count(text[:read])) if read else 0
        if not policy.explicit:
            out.append(PlannedCall(read, (), read_tokens, 0))
            continue
        if not read_tokens:
            read = 0
        later = {lcp(text, prompts[k]) for k in range(i + 1, len(prompts))}
        room = policy.max_breakpoints - (1 if read else 0)
        writes = sorted(p for p in later if p > read and p < len(text) and count(text[:p]) >= policy.min_tokens)
        writes = writes[-room:] if room > 0 else []
        written += [(i, p) for p in writes]
        write_tokens = count(text[: writes[-1]]) - read_tokens if writes else 0
        points = tuple(sorted({*writes, *((read,) if read else ())}))
        out.append(PlannedCall(read, points, read_tokens, max(write_tokens, 0)))
    return out


def planning_count(model: Model) -> Callable[[str], int]:
    """Token counts to plan with: the model's own when exact and offline, else the offline estimate
    (Anthropic's exact counts are an API call each, too many to plan a sweep with)."""
    tok = model.tokenizer
    if tok.exact and not getattr(model, "counts_with_api", False):
        return tok.count
    return EstimateTokenizer().count
