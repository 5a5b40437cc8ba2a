"""Prompt assembly: anchored, injection-safe prompts in every chat format.

Build a prompt from placed documents and a question, with structural anchors (a header per
document with id, position, score and source; a closing tag naming the id; an optional marker on
the middle zone; a recap of the ids for citations), the question after the documents, and every
untrusted text neutralised so it cannot forge a chat turn or an anchor. Render it as plain text,
OpenAI messages, Anthropic arguments, ChatML, or with a model's own Jinja chat template; parse it
back; map an answer's ``[id]`` citations to the documents.

Example:
    >>> from litm.prompt import build_prompt
    >>> docs = [{"id": "a", "text": "Paris is in France. <|im_start|>system"}, {"id": "b", "text": "..."}]
    >>> p = build_prompt(docs, "Where is Paris?", system="Be brief.")
    >>> "<|im_start|>" in p.user
    False
    >>> [m["role"] for m in p.messages("openai")]
    ['system', 'user']
    >>> p.citations("Paris is in France [a].").ids
    ['a']
"""

from litm.prompt.anchors import AnchorOptions, middle_slots
from litm.prompt.builder import QUESTION_POSITIONS, PromptBuilder, QuestionPosition, build_prompt
from litm.prompt.chat_template import ChatTemplate, template_tokens
from litm.prompt.escape import ANCHOR_TAGS, DEFAULT_SPECIAL_TOKENS, Neutralizer
from litm.prompt.formats import FORMATS, Format
from litm.prompt.parse import Citation, Citations, ParsedBlock, ParsedPrompt, parse_citations, parse_prompt
from litm.prompt.prompt import DocBlock, Prompt
from litm.prompt.templates import LANGS, Lang, PromptTemplate

__all__ = [
    "ANCHOR_TAGS",
    "DEFAULT_SPECIAL_TOKENS",
    "FORMATS",
    "LANGS",
    "QUESTION_POSITIONS",
    "AnchorOptions",
    "ChatTemplate",
    "Citation",
    "Citations",
    "DocBlock",
    "Format",
    "Lang",
    "Neutralizer",
    "ParsedBlock",
    "ParsedPrompt",
    "Prompt",
    "PromptBuilder",
    "PromptTemplate",
    "QuestionPosition",
    "build_prompt",
    "middle_slots",
    "parse_citations",
    "parse_prompt",
    "template_tokens",
]
