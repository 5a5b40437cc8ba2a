"""Document blocks read back out of a prompt, and the scanner the closed anchor styles share.

A style whose blocks open with a header line and close with a tag (``xml``, ``bracket``) is read by
:func:`scan_closed`, given that style's patterns; the result is a list of :class:`ParsedBlock`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from litm.errors import PromptError
from litm.prompt._escape import Neutralizer
from litm.prompt._templates import PromptTemplate

__all__ = ["ParsedBlock", "scan_closed"]


@dataclass(frozen=True)
class ParsedBlock:
    """One document block read back: its id, original text, and header fields (un-escaped).

    ``attrs`` maps the header's own field names (``position`` or ``位置`` in ``xml``, ``POSITION`` in
    ``bracket``) to values; ``position``, ``score``, ``rank``, ``title``, ``source`` and ``middle`` read
    them whatever the style and language. ``start``/``end`` delimit the block in the string it was
    parsed from (for messages: in that message's content).
    """

    id: str
    text: str
    attrs: Mapping[str, str]
    template: PromptTemplate = field(repr=False)
    start: int = 0
    end: int = 0
    style: str = "xml"
    #: The style's header field names by meaning (``position`` -> ``位置``), plus ``middle``: the zone value.
    keys: Mapping[str, str] = field(default_factory=dict, repr=False)

    def _get(self, key: str) -> str | None:
        name = self.keys.get(key)
        return None if name is None else self.attrs.get(name)

    @property
    def position(self) -> str | None:
        return self._get("position")

    @property
    def score(self) -> str | None:
        return self._get("score")

    @property
    def rank(self) -> str | None:
        return self._get("rank")

    @property
    def title(self) -> str | None:
        return self._get("title")

    @property
    def source(self) -> str | None:
        return self._get("source")

    @property
    def middle(self) -> bool:
        return "middle" in self.keys and self._get("zone") == self.keys["middle"]


def scan_closed(
    text: str,
    *,
    anchor: re.Pattern[str],
    opening: re.Pattern[str],
    closing: re.Pattern[str],
    read_header: Callable[[re.Match[str], int], list[tuple[str, str]]],
    id_key: str,
    unescape: Callable[[str], str],
    neutralizer: Neutralizer,
    template: PromptTemplate,
    style: str,
    keys: Mapping[str, str],
) -> list[ParsedBlock]:
    """Blocks of a style that opens with a header line and closes with a tag that may name the id.

    ``anchor`` finds anything anchor-like (in any case): each occurrence must be part of a well-formed
    block. Since a document body cannot contain an anchor (it is escaped), the first anchor after a
    header is that block's closing tag. ``read_header`` splits a matched header into its (name, escaped
    value) fields; ``unescape`` restores a value.
    """
    blocks: list[ParsedBlock] = []
    pos = 0
    while True:
        m = anchor.search(text, pos)
        if m is None:
            return blocks
        head = opening.match(text, m.start())
        if head is None:
            found = text[m.start() : m.start() + 40]
            raise PromptError(f"malformed prompt: {found!r} at offset {m.start()} is not a document header")
        attrs: dict[str, str] = {}
        for name, value in read_header(head, m.start()):
            if name in attrs:
                raise PromptError(f"malformed prompt: header at offset {m.start()} repeats {name!r}")
            attrs[name] = unescape(value)
        if id_key not in attrs:
            raise PromptError(f"malformed prompt: header at offset {m.start()} has no {id_key!r}")
        doc_id = attrs[id_key]
        nxt = anchor.search(text, head.end())
        end = closing.match(text, nxt.start() - 1) if nxt is not None and nxt.start() > head.end() else None
        if nxt is None or end is None:
            raise PromptError(f"malformed prompt: document {doc_id!r} is not closed")
        if end.group(1) is not None and unescape(end.group(1)) != doc_id:
            raise PromptError(f"malformed prompt: document {doc_id!r} is closed by {unescape(end.group(1))!r}")
        body = text[head.end() : end.start()]
        restored = neutralizer.restore(body)
        blocks.append(ParsedBlock(doc_id, restored, attrs, template, m.start(), end.end(), style, keys))
        pos = end.end()
