"""Re-run the findings of issue 11 against an old checkout and this one, and print what each shows.

Every finding is a few lines of user code, written once for the old API and once for the new one where the
API moved (same behaviour asked for). Each snippet prints one line; a finding is fixed when the old line
shows the bug and the new line shows the behaviour a user relies on. The regression tests that pin each fix
are named in ``docs/results/issue-11-regressions/README.md``.

Usage (the old tree is the commit the issue was filed against)::

    git worktree add /tmp/litm-old e626cb4
    python scripts/issue11_regressions.py --old /tmp/litm-old/src --new src
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap

TOOL_HISTORY = """
msgs = [{"role": "system", "content": "Plan trips."}, {"role": "user", "content": "Weather in Paris? " * 30},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "18 C and sunny. " * 30},
        {"role": "user", "content": "And tomorrow?"}]
"""

CAPTURE = """
import json
import httpx2 as httpx  # the installed anthropic SDK takes httpx2 clients
sent = []
def handler(request):
    sent.append((request.url.path, json.loads(request.content or b"{}")))
    return httpx.Response(200, json={"id": "m", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1}})
"""

# (finding, old snippet, new snippet); None means the same code runs on both.
FINDINGS: list[tuple[str, str, str | None]] = [
    (
        "1 tool-calling history counted with a real tokenizer",
        TOOL_HISTORY + """
from litm.budget import compact_history
from litm.tokens import get_tokenizer
try:
    out = compact_history(msgs, 120, counter=get_tokenizer("openai:gpt-4"))
    print("ok:", [m["role"] for m in out.messages])
except Exception as e:
    print(type(e).__name__ + ":", e)
""",
        None,
    ),
    (
        "2 Anthropic trim sends what the Messages API accepts",
        CAPTURE + """
import anthropic
from litm.budget import guard
msgs = [{"role": "user", "content": "Question %d? " % i + "filler " * 40} if i % 2 == 0 else
        {"role": "assistant", "content": "Answer %d. " % i + "filler " * 40} for i in range(7)]
client = anthropic.Anthropic(api_key="x", http_client=httpx.Client(transport=httpx.MockTransport(handler)))
g = guard(client, max_input_tokens=200, tokenizer="openai:gpt-4", on_exceed="trim")
g.messages.create(model="claude-x", max_tokens=10, messages=msgs)
roles = [m["role"] for m in sent[0][1]["messages"]]
print("roles sent:", roles, "| system in messages:", "system" in roles, "| first:", roles[0])
""",
        None,
    ),
    (
        "3 fit keeps the best-scored document",
        """
from litm.budget import fit
from litm.prompt import PromptBuilder
from litm.tokens import get_tokenizer
docs = [{"id": f"d{i}", "text": "Passage. " * 20, "score": s} for i, s in enumerate([0.1, 0.2, 0.3, 0.4, 0.9])]
r = fit(docs, "Q?", PromptBuilder(strategy="pyramid", placement={"rank_by": "score"}),
        get_tokenizer("openai:gpt-4"), 150)
print("kept:", [d.id for d in r.kept])
""",
        """
import warnings; warnings.simplefilter("ignore")
from litm.budget import fit
from litm.prompt import PromptBuilder
from litm.tokens import get_tokenizer
docs = [{"id": f"d{i}", "text": "Passage. " * 20, "score": s} for i, s in enumerate([0.1, 0.2, 0.3, 0.4, 0.9])]
r = fit(docs, "Q?", PromptBuilder(strategy="pyramid", placement={"rank_by": "score"}),
        get_tokenizer("openai:gpt-4"), 150)
print("kept:", [d.id for d in r.kept])
""",
    ),
    (
        "4 GPT-4o counted exactly; the no-key Claude estimate on Chinese; a margin when approximate",
        """
from litm.tokens import get_tokenizer
zh = "第一届诺贝尔物理学奖于1901年颁发给威廉·伦琴。" * 20
gpt4o, claude = get_tokenizer("openai:gpt-4o"), get_tokenizer("anthropic:claude-haiku-4-5")
print("gpt-4o:", gpt4o.name, "exact", gpt4o.exact, "| claude estimate on Chinese:", claude.count(zh),
      "tokens for", len(zh), "chars | margin:", getattr(claude, "margin", None))
""",
        None,
    ),
    (
        "5 the Responses API, with_options() and tools are gated; async clients wrapped",
        """
import httpx, json, openai
sent = []
def handler(request):
    sent.append(request.url.path)
    return httpx.Response(500)
from litm.budget import guard
client = openai.OpenAI(api_key="x", max_retries=0, http_client=httpx.Client(transport=httpx.MockTransport(handler)))
g = guard(client, max_input_tokens=50, tokenizer="openai:gpt-4")
big = "word " * 500
for name, call in [("responses", lambda: g.responses.create(model="gpt-4", input=big)),
                   ("with_options", lambda: g.with_options(timeout=5).chat.completions.create(
                       model="gpt-4", messages=[{"role": "user", "content": big}]))]:
    try:
        call()
    except Exception as e:
        print(name, "->", type(e).__name__)
try:
    guard(openai.AsyncOpenAI(api_key="x"), max_input_tokens=50, tokenizer="openai:gpt-4")
    print("async client: wrapped")
except Exception as e:
    print("async client:", type(e).__name__, e)
print("requests that reached the transport:", sent)
""",
        None,
    ),
    (
        "6 Claude runs say they are sampled; input_tokens includes cache reads",
        """
from litm.models import Completion
print("Completion fields:", sorted(Completion.__dataclass_fields__))
""",
        None,
    ),
    (
        "7 one sentence splitter: Chinese and 'Dr. Smith'",
        """
from litm.budget.sentences import split_sentences
print(split_sentences("第一句。第二句。第三句。"), split_sentences("Dr. Smith arrived. He sat."))
""",
        """
from litm.util._sentences import split_sentences
print(split_sentences("第一句。第二句。第三句。"), split_sentences("Dr. Smith arrived. He sat."))
""",
    ),
    (
        "8 one default strategy; rank order below min_docs; exact LangChain parity for n = 2, 3",
        """
import litm
docs = ["d1", "d2", "d3", "d4", "d5", "d6"]
print("default:", litm.place(docs).strategy, "| below min_docs (scores 0.1, 0.9):",
      [d.id for d in litm.place([{"id": "a", "text": "a", "score": 0.1}, {"id": "b", "text": "b", "score": 0.9}],
       rank_by="score").docs],
      "| langchain n=2, 3:", list(litm.place(["d1", "d2"], "langchain").items),
      list(litm.place(["d1", "d2", "d3"], "langchain").items))
""",
        None,
    ),
    (
        "9 no raw distance shown as a score; (Document, score) pairs accepted",
        """
from litm.prompt import build_prompt
p = build_prompt([{"id": "near", "text": "x", "score": 0.1}, {"id": "far", "text": "y", "score": 0.9}], "Q?",
                 strategy="none", placement={"rank_by": "score", "higher_is_better": False})
print([l for l in p.text.splitlines() if l.startswith("<document")])
import litm
from langchain_core.documents import Document
try:
    print("pairs:", litm.place([(Document(page_content="x"), 0.2)]).ranks)
except Exception as e:
    print("pairs:", type(e).__name__)
""",
        """
import warnings; warnings.simplefilter("ignore")
from litm.prompt import build_prompt
p = build_prompt([{"id": "near", "text": "x", "score": 0.1}, {"id": "far", "text": "y", "score": 0.9}], "Q?",
                 strategy="none", placement={"rank_by": "score", "higher_is_better": False})
print([l for l in p.text.splitlines() if l.startswith("<document")])
import litm
from langchain_core.documents import Document
try:
    print("pairs:", litm.place([(Document(page_content="x"), 0.2)]).ranks)
except Exception as e:
    print("pairs:", type(e).__name__)
""",
    ),
    (
        "10 jinja2 is a dependency",
        """
import pathlib, re, sys
text = pathlib.Path(sys.argv[1]).parent.joinpath("pyproject.toml").read_text()
deps = text.split("dependencies = [", 1)[1].split("]", 1)[0]
print("jinja2 in dependencies:", "jinja2" in deps)
""",
        None,
    ),
    (
        "11 a built Prompt goes to Model.complete, pickles and compares by content; plan.items immutable",
        """
import pickle
from litm.prompt import build_prompt
from litm.models import load_model
p, q = build_prompt(["Paris is in France."], "Where?"), build_prompt(["Paris is in France."], "Where?")
m = load_model("openai:gpt-4")
try:
    print("count a Prompt:", m.count_tokens(p))
except Exception as e:
    print("count a Prompt:", type(e).__name__)
try:
    pickle.dumps(p); print("pickles")
except Exception as e:
    print("pickle:", type(e).__name__)
import litm
print("equal:", p == q, "| items:", type(litm.place(["a", "b"]).items).__name__)
""",
        None,
    ),
    (
        "12 typed errors: Doc(id=None), a bad rank_by",
        """
import litm
for call in (lambda: litm.build_prompt([litm.Doc(text="x", id=None)], "Q?"),
             lambda: litm.place(["a"], rank_by="best")):
    try:
        call()
        print("no error")
    except Exception as e:
        print(type(e).__name__, "| ValueError or TypeError:", isinstance(e, (ValueError, TypeError)),
              "| LitmError:", isinstance(e, litm.LitmError))
""",
        None,
    ),
]


def run(src: str, code: str) -> str:
    env = {**os.environ, "PYTHONPATH": src, "ANTHROPIC_API_KEY": ""}
    env.pop("ANTHROPIC_API_KEY")
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), src], capture_output=True, text=True, env=env, timeout=300
    )
    out = (done.stdout.strip() or done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.stdout).strip()
    return " / ".join(line for line in out.splitlines() if line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="src/ of the old checkout")
    parser.add_argument("--new", required=True, help="src/ of this checkout")
    args = parser.parse_args()
    for title, old_code, new_code in FINDINGS:
        print(f"## {title}")
        print(f"before: {run(os.path.abspath(args.old), old_code)}")
        print(f"after:  {run(os.path.abspath(args.new), new_code or old_code)}\n")


if __name__ == "__main__":
    main()
