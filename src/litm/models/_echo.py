"""Prompt log-probabilities from an OpenAI-compatible server: ``/completions`` with ``echo`` and ``logprobs``.

The prompt and the continuation are sent as one string; the server echoes every prompt token with its
log-probability and character offset, and the tokens that cover continuation characters are the
continuation's (a token straddling the boundary counts as the continuation's). Servers disagree on what
they echo, so the first request is checked: the server's own log-probability of the token it generates
after the prompt must equal what it echoes for that token once appended to the prompt. llama-cpp-python's
server (0.3.x) fails this check: it echoes each token's log-probability one position late (the probability
of the token *after* it; checked against its real server in ``tests/test_models_echo.py``), so its values are
refused rather than reported.

>>> covering([0, 5, 11], ["Hello", " world", "!"], start=5, end=12)
[1, 2]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from litm.errors import LogprobsUnavailableError, ModelError
from litm.models._logprobs import Logprobs

if TYPE_CHECKING:  # the ``openai`` SDK is an optional extra
    from openai.types import Completion as SdkCompletion

__all__ = ["ECHO_TOLERANCE", "EchoScorer", "covering"]

#: Largest difference (nats) between a generated token's log-probability and the echoed one that still passes.
ECHO_TOLERANCE = 0.02


def covering(offsets: Sequence[int], tokens: Sequence[str], *, start: int, end: int) -> list[int]:
    """Indices of the tokens whose characters overlap ``[start, end)``."""
    return [i for i, (at, tok) in enumerate(zip(offsets, tokens, strict=True)) if at < end and at + len(tok) > start]


def _logprobs_of(response: SdkCompletion) -> tuple[list[int], list[str], list[float | None]]:
    choice = response.choices[0]
    lp = getattr(choice, "logprobs", None)
    if lp is None or lp.token_logprobs is None or lp.text_offset is None or lp.tokens is None:
        raise LogprobsUnavailableError("the server returned no log-probabilities for an echo request")
    return list(lp.text_offset), list(lp.tokens), list(lp.token_logprobs)


class EchoScorer:
    """Scores continuations through ``create(**kwargs)`` (the SDK's ``completions.create``), checked once."""

    def __init__(self, create: Callable[..., SdkCompletion], model: str, where: str) -> None:
        self._create = create
        self._model = model
        self._where = where
        self._verified = False

    def _echo(self, text: str) -> tuple[list[int], list[str], list[float | None]]:
        resp = self._create(model=self._model, prompt=text, max_tokens=1, temperature=0, echo=True, logprobs=0)
        return _logprobs_of(resp)

    def verify(self, prompt: str) -> None:
        """Check the server's echoed log-probabilities against its generation log-probability, once."""
        if self._verified:
            return
        resp = self._create(model=self._model, prompt=prompt, max_tokens=1, temperature=0, logprobs=1)
        _, tokens, values = _logprobs_of(resp)
        if not tokens or values[0] is None:
            raise LogprobsUnavailableError(f"{self._where} returned no log-probability for a generated token")
        offsets, echoed, echoed_lp = self._echo(prompt + tokens[0])
        at = [i for i, o in enumerate(offsets) if o == len(prompt) and echoed[i] == tokens[0]]
        if not at or echoed_lp[at[0]] is None:
            raise LogprobsUnavailableError(
                f"cannot check the log-probabilities {self._where} echoes (the generated token {tokens[0]!r} is "
                "not echoed as one token): not using them"
            )
        generated, echo = float(values[0]), float(echoed_lp[at[0]])  # type: ignore[arg-type]
        if abs(generated - echo) > ECHO_TOLERANCE:
            raise LogprobsUnavailableError(
                f"{self._where} echoes log-probability {echo:.3f} for {tokens[0]!r} after the prompt but gave "
                f"{generated:.3f} when it generated it: its prompt log-probabilities are misaligned "
                "(llama-cpp-python's server shifts them by one token), so litm does not report them"
            )
        self._verified = True

    def score(self, prompt: str, continuations: Sequence[str]) -> list[Logprobs]:
        """Each continuation's token log-probabilities after ``prompt`` (one echo request per continuation)."""
        self.verify(prompt)
        out = []
        for cont in continuations:
            start = time.perf_counter()
            offsets, tokens, values = self._echo(prompt + cont)
            picked = covering(offsets, tokens, start=len(prompt), end=len(prompt) + len(cont))
            if not picked or any(values[i] is None for i in picked):
                raise ModelError(f"{self._where} echoed no log-probability for the continuation {cont!r}")
            before = sum(1 for i, at in enumerate(offsets) if at < len(prompt) and i not in picked)
            out.append(
                Logprobs(
                    cont, tuple(tokens[i] for i in picked), tuple(float(values[i]) for i in picked),  # type: ignore[arg-type]
                    before, time.perf_counter() - start,
                )
            )  # fmt: skip
        return out
