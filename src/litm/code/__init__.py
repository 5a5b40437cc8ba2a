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
(``resolution == "name"``). Pieces are :class:`litm.placement._documents.Doc` values (:meth:`CodeContext.docs`), so
litm's placement and anchored prompts apply unchanged. Needs the ``code`` extra: ``pip install 'litm[code]'``.
"""

from litm.code._context import code_context, make_workspace
from litm.code._pieces import CodePiece
from litm.code._result import CodeContext, render_docs
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
    "CodeParseError",
    "CodePiece",
    "CodeTargetNotFoundError",
    "CodeTargetTooLargeError",
    "UnsupportedLanguageError",
    "code_context",
    "make_workspace",
    "render_docs",
]
