"""A griffe extension for the docs site: litm's docstrings, written for ``help()`` and doctest, read as Markdown.

mkdocstrings renders a docstring as Markdown, where a ``>>>`` line is a nested block quote and ``['b', 'a']`` a
reference link. This extension fences each doctest run (the ``>>>`` lines, their ``...`` continuations and their
expected output, up to a blank line) as a ``pycon`` code block, and turns Sphinx roles (``:func:`place```) into
code spans. It changes what the site shows, never the source. Loaded by ``mkdocs.yml``
(``plugins.mkdocstrings.handlers.python.options.extensions``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const):`~?([^`]+)`")


def fence_doctests(text: str) -> str:
    """Return ``text`` with every doctest run fenced as ``pycon`` and Sphinx roles as code spans.

    >>> fence_doctests("Example:\\n    >>> 1 + 1\\n    2\\n\\nSee :func:`place`.").splitlines()
    ['Example:', '    ```pycon', '    >>> 1 + 1', '    2', '    ```', '', 'See `place`.']
    """
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith("```"):
            in_fence = not in_fence
        if in_fence or not stripped.startswith(">>>"):
            out.append(line if in_fence else _ROLE.sub(r"`\1`", line))
            i += 1
            continue
        indent = line[: len(line) - len(stripped)]
        out.append(f"{indent}```pycon")
        while i < len(lines) and lines[i].strip() and not lines[i].lstrip().startswith("```"):
            out.append(lines[i])
            i += 1
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    """Fence doctest runs in every docstring griffe loads for the site."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Rewrite ``obj``'s docstring for Markdown (the loaded copy only)."""
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
