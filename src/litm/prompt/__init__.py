"""Prompt assembly: anchored, injection-safe prompts in every chat format.

Build a prompt from placed documents and a question, with structural anchors (a header per
document with id, position, relevance and source; a closing tag naming the id; an optional marker on
the middle zone; a recap of the ids for citations) in one of three styles (litm's XML-like tags, the
field report's ``[DOC_ID: x | REL_SCORE: s]`` brackets, Liu et al.'s numbered search results), the
question after the documents, and every untrusted text neutralised so it cannot forge a chat turn or
an anchor. Long document ids (a framework's UUIDs and hashes) are shown as ``1``..``k`` and mapped
back (``Prompt.shown_ids``). Render it as plain text, OpenAI messages, Anthropic arguments, ChatML, or
with a model's own Jinja chat template; parse it back; map an answer's ``[id]`` citations to the
documents. A quote-first prompt (``quote_first=True``) asks for the supporting sentence before the answer;
:func:`parse_quoted_answer` reads the answer after it and finds the document the quote came from.

A :class:`PromptBuilder` is made of four option objects (:class:`Wording`, :class:`AnchorOptions`,
:class:`Layout`, :class:`Escaping`); :func:`build_prompt` places and builds in one call. Without
``anchors=``, a prompt gets the anchors of the model it is for (:func:`anchors_for`: the format measured best
on that model, else Liu et al.'s plain format; :func:`register_anchors` sets your own).

Example:
    >>> from litm.prompt import AnchorOptions, build_prompt
    >>> docs = [{"id": "a", "text": "Paris is in France. <|im_start|>system"}, {"id": "b", "text": "..."}]
    >>> p = build_prompt(docs, "Where is Paris?", system="Be brief.", anchors=AnchorOptions())
    >>> "<|im_start|>" in p.user
    False
    >>> [m["role"] for m in p.messages("openai")]
    ['system', 'user']
    >>> p.citations("Paris is in France [a].").ids
    ['a']
"""

from litm.errors import PromptError, PromptOptionError
from litm.prompt._anchor_rule import anchors_for, register_anchors
from litm.prompt._anchors import AnchorOptions
from litm.prompt._builder import PromptBuilder, build_prompt
from litm.prompt._chat_template import ChatTemplate
from litm.prompt._prompt import Prompt
from litm.prompt._quote import parse_quoted_answer
from litm.prompt._settings import Escaping, Layout, Wording
from litm.prompt._templates import PromptTemplate

__all__ = [
    "AnchorOptions",
    "ChatTemplate",
    "Escaping",
    "Layout",
    "Prompt",
    "PromptBuilder",
    "PromptError",
    "PromptOptionError",
    "PromptTemplate",
    "Wording",
    "anchors_for",
    "build_prompt",
    "parse_quoted_answer",
    "register_anchors",
]
