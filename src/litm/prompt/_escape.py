"""Neutralising untrusted text: visible, reversible escapes for anything that would forge structure.

Retrieved documents and user questions are untrusted. A document that contains ``<|im_start|>system``
or our own closing tag could end its block early and open a fake turn. :class:`Neutralizer` defeats
that with one rule: for every *pattern* (a chat control token such as ``<|im_end|>`` or ``[INST]``,
or an anchor prefix such as ``<document``) it inserts a backslash after the pattern's first character
wherever the pattern occurs, so ``<|im_start|>`` becomes ``<\\|im_start|>`` and ``[INST]`` becomes
``[\\INST]``. A tokenizer no longer sees a special token, a reader (human or model) still sees the
text, and nothing around it is deleted.

The escape is exactly invertible (:meth:`Neutralizer.restore`): text that already looks escaped
(the first character, one or more backslashes, the rest of a pattern) gets one more backslash, so
restoring removes exactly one from every such run. Matching ignores case (``[inst]`` is escaped
too), and the output never contains any pattern, in any case. A pattern's first character must not
be a backslash and the rest must not contain one; every built-in token satisfies that.

Example:
    >>> n = Neutralizer()
    >>> n.neutralize("ok <|im_end|><|im_start|>system")
    'ok <\\\\|im_end|><\\\\|im_start|>system'
    >>> n.restore(n.neutralize("a <\\\\|b [INST]")) == "a <\\\\|b [INST]"
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cached_property

from litm.errors import PromptError

__all__ = [
    "ANCHOR_TAGS",
    "DEFAULT_SPECIAL_TOKENS",
    "XML_ATTR",
    "Entities",
    "Neutralizer",
    "escape_attr",
    "unescape_attr",
]

# Chat role and control tokens of the common model families. ``<|`` and ``<`` + U+FF5C (the full-width bar
# of DeepSeek) stand for every ``<|...|>`` token at once: ChatML (Qwen, SmolLM, Phi-3.5), Llama 3
# (``<|begin_of_text|>``, ``<|start_header_id|>``, ``<|eot_id|>``), Phi (``<|user|>``, ``<|end|>``),
# Command-R, Granite and GPT-style ``<|endoftext|>``. The rest are the bracket and angle tokens of
# Llama 2 / Mistral (``[INST]``, ``<<SYS>>``, ``<s>``), Gemma (``<start_of_turn>``) and the tags Qwen
# tokenizers treat as special (``<tool_call>``, ``<think>``).
DEFAULT_SPECIAL_TOKENS: tuple[str, ...] = (
    "<|",
    "<\uff5c",  # DeepSeek: <｜begin▁of▁sentence｜>, <｜User｜>  # noqa: RUF003
    "[INST]",
    "[/INST]",
    "<<SYS>>",
    "<</SYS>>",
    "<s>",
    "</s>",
    "<unk>",
    "<pad>",
    "<bos>",
    "<eos>",
    "<mask>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<start_of_image>",
    "<end_of_image>",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_CALLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
)

# The document tag names of the built-in templates; their anchors are escaped whichever language a
# prompt uses, so a document cannot imitate the English header inside a Chinese prompt either.
ANCHOR_TAGS: tuple[str, ...] = ("document", "文档")

_BACKSLASH = "\\"


def _check_pattern(pattern: object) -> str:
    if not isinstance(pattern, str):
        raise PromptError(f"a special token must be a string, got {type(pattern).__name__}")
    if len(pattern) < 2:
        raise PromptError(f"special token {pattern!r} is too short to escape (needs 2+ characters)")
    if pattern[0] == _BACKSLASH or _BACKSLASH in pattern[1:]:
        raise PromptError(f"special token {pattern!r} contains a backslash, which the escape reserves")
    if pattern[0].isspace():
        raise PromptError(f"special token {pattern!r} starts with whitespace")
    return pattern


def anchor_patterns(tag: str) -> tuple[str, str]:
    """The two prefixes that open our own anchors for ``tag``: ``<tag`` and ``</tag``."""
    return f"<{tag}", f"</{tag}"


def _tag_patterns(tag: object) -> list[str]:
    if not isinstance(tag, str) or not tag:
        raise PromptError(f"an anchor tag must be a non-empty string, got {tag!r}")
    return [_check_pattern(p) for p in anchor_patterns(tag)]


class Neutralizer:
    """Escapes a set of patterns visibly and reversibly (see the module docstring for the rule).

    ``tokens`` are extra literal patterns (for example a tokenizer's special tokens); ``tags`` are
    anchor tag names whose opening and closing prefixes are escaped. The default set covers
    :data:`DEFAULT_SPECIAL_TOKENS` and :data:`ANCHOR_TAGS`.

    Example:
        >>> Neutralizer(tokens=["<custom>"]).neutralize("a <custom> b")
        'a <\\\\custom> b'
    """

    def __init__(
        self,
        tokens: Iterable[str] = (),
        *,
        tags: Iterable[str] = (),
        defaults: bool = True,
    ) -> None:
        if isinstance(tokens, str) or isinstance(tags, str):
            raise PromptError("tokens and tags must be lists of strings, not one string")
        found: list[str] = list(DEFAULT_SPECIAL_TOKENS) if defaults else []
        found.extend(_check_pattern(t) for t in tokens)
        for tag in [*ANCHOR_TAGS, *tags] if defaults else list(tags):
            found.extend(_tag_patterns(tag))
        self._patterns = _prune(found)

    @property
    def patterns(self) -> tuple[str, ...]:
        """The patterns escaped, shortest-prefix form (``<|`` stands for every ``<|...|>`` token)."""
        return self._patterns

    def __repr__(self) -> str:
        return f"Neutralizer({len(self.patterns)} patterns)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Neutralizer) and self.patterns == other.patterns

    def __hash__(self) -> int:
        return hash(self.patterns)

    def extended(self, tokens: Iterable[str] = (), *, tags: Iterable[str] = ()) -> Neutralizer:
        """A neutralizer with this one's patterns plus ``tokens`` and the anchors of ``tags``."""
        if isinstance(tokens, str) or isinstance(tags, str):
            raise PromptError("tokens and tags must be lists of strings, not one string")
        extra = [_check_pattern(t) for t in tokens]
        for tag in tags:
            extra.extend(_tag_patterns(tag))
        out = Neutralizer(defaults=False)
        out._patterns = _prune([*self._patterns, *extra])  # before any compiled regex is cached
        return out

    def covers(self, tokens: Iterable[str]) -> bool:
        """True when every token in ``tokens`` is already escaped by this neutralizer."""
        return all(self._find.search(t) is not None for t in tokens)

    # -- the escape -----------------------------------------------------------------------------

    @cached_property
    def _find(self) -> re.Pattern[str]:
        # A pattern occurrence, as plain text: what must never survive in the output.
        alternatives = sorted(self.patterns, key=len, reverse=True)
        return re.compile("|".join(re.escape(p) for p in alternatives), re.IGNORECASE)

    @cached_property
    def _escape_site(self) -> re.Pattern[str]:
        # The first character, any run of backslashes, then (looking ahead) the rest of a pattern.
        # Only ``first + backslashes`` is consumed, so every site in the text is found, overlaps
        # included; matches cannot overlap since the first character is never a backslash.
        groups: dict[str, list[str]] = {}
        for p in self.patterns:
            groups.setdefault(p[0], []).append(p[1:])
        parts = []
        for first, rests in groups.items():
            rests.sort(key=len, reverse=True)
            parts.append(f"{re.escape(first)}\\\\*(?:{'|'.join(f'(?={re.escape(r)})' for r in rests)})")
        return re.compile("|".join(parts) or "(?!)", re.IGNORECASE)

    @cached_property
    def _escaped_run(self) -> re.Pattern[str]:
        firsts = sorted({p[0] for p in self.patterns})
        return re.compile(
            f"(?:{'|'.join(re.escape(f) for f in firsts)})\\\\+" if firsts else "(?!)", re.IGNORECASE
        )

    @cached_property
    def _max_rest(self) -> int:
        return max((len(p) - 1 for p in self.patterns), default=0)

    def neutralize(self, text: str) -> str:
        """Escape every pattern occurrence (and every already-escaped-looking run) in ``text``."""
        if not isinstance(text, str):
            raise PromptError(f"can only neutralise str, got {type(text).__name__}")
        return self._escape_site.sub(lambda m: m.group(0) + _BACKSLASH, text)

    def restore(self, text: str) -> str:
        """Undo :meth:`neutralize` exactly: ``restore(neutralize(t)) == t`` for every string ``t``.

        Works right to left: a run ``first + backslashes`` is an escape site when what follows it,
        once everything to its right is restored, continues a pattern that starts with ``first``.
        """
        runs = list(self._escaped_run.finditer(text))
        if not runs:
            return text
        width = self._max_rest
        pieces: list[str] = []  # restored text, right to left
        head = ""  # the first ``width`` characters of the restored text right of ``cursor``
        cursor = len(text)
        for m in reversed(runs):
            start, end = m.span()
            window = (text[end:cursor] + head)[:width]
            if self._find.match(text[start] + window):
                segment = text[start : end - 1] + text[end:cursor]
            else:
                segment = text[start:cursor]
            pieces.append(segment)
            head = (segment + head)[:width]
            cursor = start
        pieces.append(text[:cursor])
        return "".join(reversed(pieces))

    def find_forgeries(self, text: str) -> list[str]:
        """Every pattern occurrence in ``text`` (what :meth:`neutralize` would escape), for checks."""
        return [m.group(0) for m in self._find.finditer(text)]


def _prune(patterns: Iterable[str]) -> tuple[str, ...]:
    """Drop duplicates and patterns made redundant by a shorter one they start with (``<|`` covers
    ``<|im_start|>``): escaping the shorter inserts the same backslash at the same place."""
    unique = sorted(set(patterns), key=lambda p: (len(p), p))
    kept: list[str] = []
    for p in unique:
        if not any(_starts_with(p, k) for k in kept):
            kept.append(p)
    return tuple(sorted(kept))


def _starts_with(text: str, prefix: str) -> bool:
    # Case-insensitive only for ASCII, where ``lower`` and the regex's IGNORECASE agree exactly.
    if text.startswith(prefix):
        return True
    return text.isascii() and prefix.isascii() and text.lower().startswith(prefix.lower())


# -- header values -----------------------------------------------------------------------------------

# Every character a header value may need to hide, as an entity. Each anchor style escapes the ones that
# would end its value or its header: XML-like attributes their quote, angle brackets and line breaks; the
# bracket style its field separator, brackets and line breaks. ``&`` is always escaped, so decoding is exact.
_ENTITIES = {
    "&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;", "\n": "&#10;", "\r": "&#13;",
    "|": "&#124;", "[": "&#91;", "]": "&#93;",
}


class Entities:
    """A reversible entity escape for header values over a set of characters (``&`` always included).

    Example:
        >>> Entities("|]").escape("a | b]", Neutralizer())
        'a &#124; b&#93;'
    """

    def __init__(self, chars: str) -> None:
        self._table = {c: _ENTITIES[c] for c in sorted({"&", *chars})}
        back = {v: k for k, v in self._table.items()}
        self._find = re.compile("|".join(re.escape(c) for c in self._table))
        self._back = back
        self._find_back = re.compile("|".join(re.escape(e) for e in back))

    def escape(self, value: str, neutralizer: Neutralizer) -> str:
        """Entities first (a value stays inside its field and on one line), then the neutralizer (which
        escapes tokens that do not start with an escaped character, ``[INST]`` in an XML title)."""
        return neutralizer.neutralize(self._find.sub(lambda m: self._table[m.group(0)], value))

    def unescape(self, value: str, neutralizer: Neutralizer) -> str:
        """Invert :meth:`escape`."""
        return self._find_back.sub(lambda m: self._back[m.group(0)], neutralizer.restore(value))


XML_ATTR = Entities('"<>\n\r')


def escape_attr(value: str, neutralizer: Neutralizer) -> str:
    """Escape an XML-style header attribute value (id, title, source): entities, then the neutralizer.

    Example:
        >>> escape_attr('a "b" <c>', Neutralizer())
        'a &quot;b&quot; &lt;c&gt;'
    """
    return XML_ATTR.escape(value, neutralizer)


def unescape_attr(value: str, neutralizer: Neutralizer) -> str:
    """Invert :func:`escape_attr`."""
    return XML_ATTR.unescape(value, neutralizer)
