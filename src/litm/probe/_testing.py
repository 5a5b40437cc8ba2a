"""A scripted stand-in model with a known dead zone, for testing the probe (and pipelines) without weights.

:class:`DeadZoneModel` reads the prompt, finds the facts the probe planted, and answers correctly
unless the fact sits inside ``dead_zone`` (relative character position in the prompt), where it echoes
the question instead. It knows the ``needle`` and ``multi`` facts; anything else gets "I do not know".
Its tokenizer splits words and punctuation, glues whitespace to the next token
(as SentencePiece does) and adds a BOS token, so exact-length insertion is exercised for real.
``remote=True`` makes it look like an API model (run concurrently, estimate before the sweep).

Example:
    >>> m = DeadZoneModel(dead_zone=(0.3, 0.7))
    >>> m.complete("Document:\\nThe access code for the Kivo vault is 123456.\\n\\nQuestion: Kivo code?\\nAnswer:").text
    ' 123456.'
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

from litm.models._base import Completion, GenerationRequest, Model
from litm.prompt._messages import Message

__all__ = ["DeadZoneModel", "WordTokenizer"]

_TOKEN = re.compile(r"\s*(?:\w+|[^\w\s])|\s+")
_VAULT = re.compile(r"access code for the (\w+) vault is (\d+)")


class WordTokenizer:
    """Words and punctuation marks are tokens; leading whitespace belongs to the next token; one BOS."""

    name = "words"
    exact = True

    def encode(self, text: str) -> list[int]:
        return [1] + [hash(t) & 0xFFFF for t in _TOKEN.findall(text)]

    def count(self, text: str) -> int:
        return 1 + len(_TOKEN.findall(text))

    def count_messages(self, messages: Sequence[Message]) -> int:
        return sum(self.count(str(m["content"])) + 3 for m in messages)


class DeadZoneModel(Model):
    """Answers planted facts correctly except inside ``dead_zone``; counts its calls (thread-safe)."""

    def __init__(
        self,
        dead_zone: tuple[float, float] = (0.3, 0.7),
        *,
        remote: bool = False,
        context_window: int = 1 << 20,
        fail_after: int | None = None,
        name: str = "dead-zone-fake",
    ) -> None:
        self.dead_zone = dead_zone
        self.remote = remote
        self.concurrency = 4 if remote else 1
        self.name = name
        self.spec = f"fake:{name}"
        self.reuse_prefix: str | None = "cold" if not remote else None
        self._window = context_window
        self._tok = WordTokenizer()
        self.fail_after = fail_after
        self.calls = 0
        self._lock = threading.Lock()

    @property
    def context_window(self) -> int:
        return self._window

    @property
    def tokenizer(self) -> WordTokenizer:
        return self._tok

    def _answer(self, prompt: str) -> str:
        question = prompt.rsplit("Question:", 1)[-1].split("\n")[0] if "Question:" in prompt else ""
        facts = [(m.start(), m.group(1), m.group(2)) for m in _VAULT.finditer(prompt)]
        if "access codes for the" in question:  # multi: every code outside the dead zone
            found = [code for at, _, code in facts if not self._dead(at, prompt)]
            return " " + ", ".join(found) if found else " Question:" + question
        for at, key, code in facts:
            if key in question:
                return " Question:" + question if self._dead(at, prompt) else f" {code}."
        return " I do not know."

    def _dead(self, at: int, prompt: str) -> bool:
        pos = at / max(len(prompt), 1)
        return self.dead_zone[0] <= pos <= self.dead_zone[1]

    def _generate(self, request: GenerationRequest) -> Completion:
        with self._lock:
            self.calls += 1
            if self.fail_after is not None and self.calls > self.fail_after:
                raise RuntimeError(f"scripted failure after {self.fail_after} calls")
        text = request.prompt
        if not isinstance(text, str):
            text = "\n".join(m["content"] for m in text)
        out = self._answer(text)
        return Completion(out, self._tok.count(text), self._tok.count(out) - 1, 0.0, "stop", self.name, 0)
