"""Code context for coding agents: the function being changed and its direct callers, not the whole file.

    >>> import sysconfig
    >>> from litm.code import code_context
    >>> from litm.tokens import get_tokenizer
    >>> ctx = code_context(sysconfig.get_paths()["stdlib"], "json/__init__.py::detect_encoding",
    ...                    budget=800, counter=get_tokenizer("openai:gpt-4"))
    >>> ctx.tokens <= 800, ctx.pieces[0].kind, ctx.resolution
    (True, 'target', 'exact')

Python is resolved exactly (``ast`` spans, jedi references through imports and aliases); JavaScript,
TypeScript, Go, Rust and Java are matched by name through tree-sitter tag queries, and say so
(``resolution == "name"``); :class:`CodeOptions` holds the less common settings. Each piece of ``ctx.pieces`` has
its ``kind``, ``source``, ``qualname`` and ``text``; :meth:`CodeContext.docs` gives them as litm documents, so
litm's placement and anchored prompts apply unchanged. Needs the ``code`` extra: ``pip install 'litm[code]'``.
"""

from litm.code._context import CodeOptions, code_context
from litm.code._result import CodeContext
from litm.errors import (
    AmbiguousCodeTargetError,
    CodeFileNotFoundError,
    CodeParseError,
    CodeTargetNotFoundError,
    CodeTargetTooLargeError,
    UnsupportedLanguageError,
)

__all__ = [
    "AmbiguousCodeTargetError",
    "CodeContext",
    "CodeFileNotFoundError",
    "CodeOptions",
    "CodeParseError",
    "CodeTargetNotFoundError",
    "CodeTargetTooLargeError",
    "UnsupportedLanguageError",
    "code_context",
]
