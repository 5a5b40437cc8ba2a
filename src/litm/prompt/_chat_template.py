"""A model's own Jinja chat template (as shipped in a GGUF's metadata), rendered in a sandbox.

:class:`ChatTemplate` wraps the template text plus the tokens it needs (``bos_token``,
``eos_token``) and the tokens the model treats as special. :meth:`ChatTemplate.special_tokens`
lists every token a document must not be able to forge: the tokenizer's control tokens (when read
from a GGUF), the BOS/EOS strings, and every token-shaped literal in the template's own text
(``<|im_start|>``, ``<start_of_turn>``, ``[INST]``, ...). The prompt builder escapes all of them.

Templates run in Jinja's immutable sandbox with what Hugging Face templates expect, as Transformers and
llama.cpp's Python bindings set it up: ``raise_exception``, ``strftime_now``, the ``loopcontrols``
extension (``break``/``continue``), a pass-through ``{% generation %}`` tag, a ``tojson`` filter that
keeps non-ASCII text, and ``tools``/``functions`` variables (``None`` unless given). Message contents are
data, never template code. Local models render their chat through this class, so a prompt is rendered
the same way whether it is counted, escaped or sent (``tests/test_models_local.py`` checks it against
llama.cpp's own formatter).

Example:
    >>> t = ChatTemplate("{% for m in messages %}<|im_start|>{{ m.role }}\\n{{ m.content }}<|im_end|>\\n"
    ...                  "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\\n{% endif %}")
    >>> t.render([{"role": "user", "content": "hi"}])
    '<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n'
    >>> sorted(t.special_tokens())
    ['<|im_end|>', '<|im_start|>']
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from litm.errors import MissingDependencyError, ModelNotFoundError, PromptError

if TYPE_CHECKING:  # optional dependencies, imported where they are used
    import llama_cpp
    from jinja2 import Template, nodes
    from jinja2.parser import Parser
    from jinja2.sandbox import ImmutableSandboxedEnvironment

__all__ = ["ChatTemplate", "template_tokens"]

# Token-shaped literals inside a chat template: ``<|...|>`` (and DeepSeek's full-width bars),
# ``<name>`` / ``</name>`` angle tokens, ``[NAME]`` / ``[/NAME]`` bracket tokens and Llama 2's ``<<SYS>>``.
_TOKEN_SHAPES = re.compile(
    r"<\|[^<>|\s]{1,64}\|>"
    r"|<\uff5c[^<>\uff5c\s]{1,64}\uff5c>"
    r"|<</?[A-Z]{2,16}>>"
    r"|</?[A-Za-z_][A-Za-z0-9_\-]{0,63}>"
    r"|\[/?[A-Z][A-Z_]{1,63}\]"
)


def template_tokens(source: str) -> list[str]:
    """Token-shaped literals in a template's string constants (and, failing a parse, its raw text).

    Example:
        >>> template_tokens("{{ '<start_of_turn>' + m.role }}[INST]{{ '<end_of_turn>' }}")
        ['<start_of_turn>', '<end_of_turn>', '[INST]']
    """
    texts: list[str] = []
    try:
        from jinja2 import nodes
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        tree = ImmutableSandboxedEnvironment().parse(source)
        texts.extend(n.value for n in tree.find_all(nodes.Const) if isinstance(n.value, str))
        texts.extend(n.data for n in tree.find_all(nodes.TemplateData))
    except Exception:
        # An unparsable template still names its tokens in its text; render() will report the error.
        texts = [source]
    seen: dict[str, None] = {}
    for text in texts:
        for m in _TOKEN_SHAPES.finditer(text):
            seen.setdefault(m.group(0), None)
    return list(seen)


def _raise_exception(message: str) -> NoReturn:
    raise PromptError(f"chat template refused the messages: {message}")


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def _tojson(
    value: object,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    # Jinja's own tojson escapes HTML characters and non-ASCII text; chat templates expect plain JSON.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _environment() -> ImmutableSandboxedEnvironment:
    """The sandboxed Jinja environment chat templates are rendered in (see the module docstring)."""
    try:
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:  # pragma: no cover - jinja2 ships with the dev and server extras
        raise MissingDependencyError("rendering a chat template needs jinja2: pip install jinja2") from None

    class GenerationTag(jinja2.ext.Extension):
        """Hugging Face's ``{% generation %}...{% endgeneration %}`` marks training targets: render its body."""

        tags = {"generation"}  # noqa: RUF012 - jinja2's Extension API reads a class attribute

        def parse(self, parser: Parser) -> list[nodes.Node]:
            parser.stream.skip(1)
            return parser.parse_statements(("name:endgeneration",), drop_needle=True)

    # trim_blocks / lstrip_blocks match how Hugging Face and llama.cpp render these templates.
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


@dataclass(frozen=True)
class ChatTemplate:
    """A Jinja chat template plus the token strings it is rendered with.

    ``tokens`` are extra strings the tokenizer treats as special (read from a GGUF by
    :meth:`from_gguf`); ``name`` says where the template came from.
    """

    source: str
    bos_token: str = ""
    eos_token: str = ""
    tokens: tuple[str, ...] = ()
    name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.source, str) or not self.source.strip():
            raise PromptError("a chat template must be a non-empty string")
        object.__setattr__(self, "tokens", tuple(self.tokens))

    @cached_property
    def _compiled(self) -> Template:
        env = _environment()
        from jinja2 import TemplateError

        try:
            return env.from_string(self.source)
        except TemplateError as exc:
            raise PromptError(f"invalid chat template: {exc}") from None

    def special_tokens(self) -> tuple[str, ...]:
        """Every token a document must not forge: template literals, BOS/EOS, tokenizer specials."""
        found: dict[str, None] = {}
        for tok in (*template_tokens(self.source), self.bos_token, self.eos_token, *self.tokens):
            if len(tok) >= 2 and "\\" not in tok and not tok[0].isspace():
                found.setdefault(tok, None)
        return tuple(found)

    def render(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        add_generation_prompt: bool = True,
        **variables: object,
    ) -> str:
        """Render ``messages`` (``[{"role": ..., "content": ...}]``) to the model's prompt string.

        ``variables`` reach the template too (``tools=[...]``, ``documents=...``); a template's own
        ``raise_exception`` becomes a :class:`~litm.errors.PromptError`.
        """
        from jinja2 import TemplateError

        context: dict[str, object] = {"tools": None, "tool_choice": None, "functions": None, "function_call": None}
        context.update(variables)
        try:
            return str(
                self._compiled.render(
                    messages=[dict(m) for m in messages],
                    add_generation_prompt=add_generation_prompt,
                    bos_token=self.bos_token,
                    eos_token=self.eos_token,
                    **context,
                )
            )
        except TemplateError as exc:
            raise PromptError(f"chat template failed to render: {exc}") from None

    @classmethod
    def from_gguf(cls, path: str | Path) -> ChatTemplate:
        """Read ``tokenizer.chat_template``, BOS/EOS and the control tokens from a GGUF file.

        Needs ``llama-cpp-python`` (the ``local`` extra); only the vocabulary is loaded, not weights.
        """
        p = Path(path)
        if not p.is_file():
            raise ModelNotFoundError(f"GGUF file not found: {p}")
        try:
            import llama_cpp
        except ImportError:
            raise MissingDependencyError(
                "reading a GGUF chat template needs llama-cpp-python: pip install 'litm[local]'"
            ) from None
        try:
            llm = llama_cpp.Llama(model_path=str(p), vocab_only=True, verbose=False)
        except Exception as exc:  # llama.cpp raises ValueError/RuntimeError for unreadable files
            raise PromptError(f"cannot read GGUF {p}: {exc}") from None
        try:
            template = cls.from_llama(llm, name=p.name)
        finally:
            llm.close()
        if template is None:
            raise PromptError(f"{p.name} has no tokenizer.chat_template; use format 'text' or 'chatml'")
        return template

    @classmethod
    def from_llama(cls, llm: llama_cpp.Llama, *, name: str | None = None) -> ChatTemplate | None:
        """The chat template of a loaded ``llama_cpp.Llama`` (None for a model without one).

        Reads ``tokenizer.chat_template``, BOS/EOS as text and the tokens the tokenizer parses as special.
        """
        import llama_cpp

        source = llm.metadata.get("tokenizer.chat_template")
        if not source:
            return None
        model = llm._model

        def text_of(token_id: int) -> str:
            return "" if token_id < 0 else str(model.token_get_text(token_id))

        # Control tokens are what the tokenizer parses out of raw text as special. User-defined ones
        # are kept only when token-shaped: some vocabularies mark plain HTML tags or runs of spaces.
        vocab = model.vocab
        specials: list[str] = []
        for i in range(model.n_vocab()):
            attr = llama_cpp.llama_vocab_get_attr(vocab, i)
            control = bool(attr & llama_cpp.LLAMA_TOKEN_ATTR_CONTROL)
            if control or (attr & llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED and _TOKEN_SHAPES.fullmatch(text_of(i))):
                specials.append(text_of(i))
        return cls(
            source=str(source),
            bos_token=text_of(int(model.token_bos())),
            eos_token=text_of(int(model.token_eos())),
            tokens=tuple(t for t in specials if t),
            name=name,
        )
