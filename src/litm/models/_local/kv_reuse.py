"""Reusing llama.cpp's KV cache across prompts without changing answers: the ``aligned``/``full``/``cold`` modes.

llama.cpp can keep the KV cache of the previous prompt and evaluate only what follows the longest shared
token prefix (``full``): a second question on the same 3,000-token context is then 20-35x faster, but the
short re-evaluated tail runs in a batch of a different shape than in a cold run, so its logits drift (by up
to about 1 on Gemma 3 270M) and greedy answers can change with what ran before (2 of 10 NQ questions did in
``benchmarks/bench_models.py``). ``aligned`` (the default) reuses only whole ``n_batch``-token chunks that a
cold run would have evaluated in exactly the same batches and re-evaluates the rest: the logits are
bit-identical to a cold run (measured max difference 0.0), answers never depend on order, and a long shared
context is still mostly reused. ``cold`` clears the cache before every prompt.

>>> reuse_mode(True), reuse_mode(False), reuse_mode("full")
('aligned', 'cold', 'full')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from litm.errors import InvalidOptionError

if TYPE_CHECKING:  # llama-cpp-python is the optional ``local`` extra, imported when a model loads
    from llama_cpp import Llama

__all__ = ["REUSE_MODES", "KvReuse", "ReuseMode", "reuse_mode"]

#: The llama.cpp batch the probe and benchmark CLIs load local models with: aligned reuse keeps whole
#: batches, so a small one keeps nearly every shared token, at about the CPU time per prompt token of 512
#: (Gemma 3 270M: docs/probe.md; Qwen2.5-Coder 0.5B, one thread: 0.94x 512's tok/s, benchmarks/bench_batch_size.py).
REUSE_BATCH = 64

#: How much of the previous prompt's KV cache a local model may reuse (see the module docstring).
ReuseMode = Literal["aligned", "full", "cold"]
REUSE_MODES: dict[object, ReuseMode] = {
    True: "aligned",
    "aligned": "aligned",
    "full": "full",
    False: "cold",
    "cold": "cold",
}


def reuse_mode(value: object) -> ReuseMode:
    """The mode for a ``reuse_prefix=`` value, else :class:`~litm.errors.InvalidOptionError`."""
    if isinstance(value, bool | str) and value in REUSE_MODES:
        return REUSE_MODES[value]
    raise InvalidOptionError(f"reuse_prefix must be True, False, 'aligned', 'full' or 'cold', got {value!r}")


class KvReuse:
    """What of one llama.cpp context's KV cache a cold run would have computed identically.

    ``exact_prefix`` counts the leading KV-cache positions that hold exactly what a cold run computes for
    them: positions evaluated as whole, ``n_batch``-aligned chunks of a prompt (not generated tokens, not a
    tail evaluated after a misaligned reuse). Aligned reuse never keeps more than that.
    """

    def __init__(self) -> None:
        self.exact_prefix = 0
        # Length of the last prompt whose every position holds what a cold evaluation of that prompt
        # computes (its partial last chunk included): scoring that same prompt needs no evaluation.
        self.cold_prompt = 0

    def reset(self) -> None:
        """Forget what the cache holds (after a reload or a failed evaluation)."""
        self.exact_prefix = 0
        self.cold_prompt = 0

    def holds_prompt(self, llm: Llama, tokens: list[int]) -> bool:
        """True when the cache holds exactly a cold evaluation of ``tokens`` (the last prompt prepared)."""
        n = len(tokens)
        return 0 < n == self.cold_prompt and llm.n_tokens >= n and llm.input_ids[:n].tolist() == tokens

    def rewound(self, position: int, step: int) -> None:
        """Positions from ``position`` on were evaluated off the cold grid (a scoring batch)."""
        self.exact_prefix = min(self.exact_prefix, position // step * step)
        self.cold_prompt = 0

    def prepare(self, llm: Llama, tokens: list[int], mode: ReuseMode) -> int:
        """Set ``llm``'s KV cache up for ``tokens`` under ``mode``; return how many prompt tokens it reuses.

        The caller holds the model's lock. llama-cpp-python reuses the longest prefix of
        ``llm.input_ids[:llm.n_tokens]`` that matches, so truncating ``n_tokens`` bounds what it reuses.
        """
        step = int(llm.n_batch)
        shared = 0
        if llm.n_tokens > 0:
            shared = int(llm.longest_token_prefix(llm.input_ids[: llm.n_tokens].tolist(), tokens))
            shared = min(shared, len(tokens) - 1)  # the last prompt token is always evaluated for fresh logits
        if mode == "full" and shared > 0:
            keep = shared
            # Positions from the last whole chunk below `keep` on are now computed off the cold grid.
            self.exact_prefix = min(self.exact_prefix, keep // step * step)
        else:
            keep = min(shared // step * step, self.exact_prefix) if mode == "aligned" else 0
            # Evaluation restarts at a chunk boundary, so the prompt's whole chunks match a cold run.
            self.exact_prefix = len(tokens) // step * step
        # Aligned and cold evaluation restart on the chunk grid, so the whole prompt will match a cold run.
        self.cold_prompt = len(tokens) if mode != "full" or keep == 0 else 0
        if keep == 0:
            llm.reset()  # type: ignore[no-untyped-call]  # n_tokens = 0: the next evaluation clears the KV cache and starts cold
        else:
            llm.n_tokens = keep
        return keep
