"""How well litm's token estimate bounds real tokenizers, per script and per tokenizer; fits its weights.

The estimate (:mod:`litm.models.tokenizers._estimate`) is for models whose tokenizer is not available. It
must never count fewer tokens than the model will bill, so it is calibrated as an upper bound of every
tokenizer available offline: OpenAI's ``o200k_base`` and ``cl100k_base`` (bpe-openai) and the llama.cpp
tokenizers of the embedded Gemma 3 270M and SmolLM2 135M. With ``--claude-json`` the legacy Claude
tokenizer (``claude.json`` of the npm package ``@anthropic-ai/tokenizer`` 0.0.4, Apache-2.0; loaded with
tiktoken) is reported as reference data; it is not used for fitting.

The corpus (``benchmarks/data/README.md``): the bundled NQ-Open passages (English), public-domain Chinese
prose, paragraphs in 15 other languages, emoji, numbers, markup, litm's own Python source, tool schemas.
Each group's texts alternate between a calibration half (fits the weights) and a held-out half (reported).

Reports: the ratio estimate / real per group and tokenizer (the sum over texts, and the smallest for one
text), the old rule (3.5 characters per token) for comparison, whether ``estimate x (1 + margin)`` covers
every text of every tokenizer, how far ``cl100k_base`` exceeds ``o200k_base`` (the margin for unknown
OpenAI model ids), tool schemas as JSON against the OpenAI cookbook's rule, and the chat overhead of the
SmolLM2 template against the estimate's allowance.

Usage::

    PYTHONPATH=src python benchmarks/bench_estimate.py                  # report, with the committed weights
    PYTHONPATH=src python benchmarks/bench_estimate.py --fit            # fit weights on the calibration half
    PYTHONPATH=src python benchmarks/bench_estimate.py --claude-json package/claude.json \\
        --out docs/results/bench-estimate/README.md                    # (npm pack @anthropic-ai/tokenizer@0.0.4)
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import math
import re
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from litm.models import load_model
from litm.models.tokenizers._bpe import OpenAITokenizer
from litm.models.tokenizers._estimate import (
    ANTHROPIC_CHARS_PER_TOKEN,
    ANY_MODEL_MARGIN,
    CLASSES,
    ESTIMATE_MARGIN,
    ESTIMATE_REPLY_TOKENS,
    ESTIMATE_TOKENS_PER_MESSAGE,
    SCRIPT_WEIGHTS,
    EstimateTokenizer,
    script_counts,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
Counter = Callable[[str], int]


@dataclass(frozen=True)
class Text:
    group: str
    text: str
    held_out: bool


def _chunks(text: str, size: int) -> list[str]:
    """Split at line ends into pieces of about ``size`` characters."""
    out, current = [], ""
    for line in text.splitlines(keepends=True):
        if current and len(current) + len(line) > size:
            out.append(current)
            current = ""
        current += line
    if current.strip():
        out.append(current)
    return out


def corpus() -> list[Text]:
    groups: dict[str, list[str]] = {}
    with gzip.open(str(resources.files("litm") / "data" / "nq-open-oracle.jsonl.gz"), "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh][:60]
    groups["en (NQ)"] = [f"{r['ctxs'][0]['title']}\n{r['ctxs'][0]['text']}" for r in rows]
    zh = (DATA / "zh-public-domain.txt").read_text(encoding="utf-8")
    groups["zh"] = [p for p in zh.split("\n\n") if len(p) > 20]
    for block in re.split(r"^# ", (DATA / "multilingual.txt").read_text(encoding="utf-8"), flags=re.M):
        if block.strip():
            label, _, body = block.partition("\n")
            groups.setdefault(label.strip(), []).append(body.strip())
    sources = sorted((ROOT / "src" / "litm").rglob("*.py"))[::7]
    groups["code (Python)"] = [c for path in sources for c in _chunks(path.read_text(encoding="utf-8"), 1500)][:60]
    tools = json.loads((DATA / "tools.json").read_text(encoding="utf-8"))
    groups["json (tool schemas)"] = [json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in tools]
    texts: list[Text] = []
    for group, items in groups.items():
        texts.extend(Text(group, item, held_out=i % 2 == 1) for i, item in enumerate(items))
    return texts


def claude_counter(path: Path) -> Counter:
    """The legacy Claude tokenizer from the npm package's claude.json, as its own countTokens does (NFKC)."""
    import tiktoken

    spec = json.loads(path.read_text(encoding="utf-8"))
    parts = spec["bpe_ranks"].split(" ")
    offset = int(parts[1])
    ranks = {base64.b64decode(tok): offset + i for i, tok in enumerate(parts[2:])}
    enc = tiktoken.Encoding("claude-legacy", pat_str=spec["pat_str"], mergeable_ranks=ranks,
                            special_tokens=spec["special_tokens"])  # fmt: skip
    return lambda text: len(enc.encode(unicodedata.normalize("NFKC", text), allowed_special="all"))


def tokenizers(claude_json: Path | None) -> dict[str, Counter]:
    out: dict[str, Counter] = {
        "o200k_base": OpenAITokenizer("o200k_base").count,
        "cl100k_base": OpenAITokenizer("cl100k_base").count,
        "gemma3-270m": load_model("local").tokenizer.count,
        "smollm2-135m": load_model("local:smollm2").tokenizer.count,
    }
    if claude_json is not None:
        out["claude (legacy, reference)"] = claude_counter(claude_json)
    return out


def _nnls(a: np.ndarray, b: np.ndarray, iters: int = 20_000) -> np.ndarray:
    """Non-negative least squares by projected gradient (8 unknowns: plenty fast)."""
    w = np.zeros(a.shape[1])
    step = 1.0 / (np.linalg.norm(a, 2) ** 2)
    for _ in range(iters):
        w = np.maximum(0.0, w - step * (a.T @ (a @ w - b)))
    return w


def fit(texts: list[Text], real: dict[str, list[int]], fitted_on: list[str]) -> dict[str, float]:
    """Relative least squares on the calibration half, then, while a calibration text of a fitting tokenizer
    is undercounted, raise the one class weight that covers it at the least cost: the least relative
    over-count added to the other texts, each group weighing the same whatever its number of texts."""
    calib = [i for i, t in enumerate(texts) if not t.held_out]
    x = np.array([[script_counts(texts[i].text)[c] for c in CLASSES] for i in calib], dtype=float)
    target = np.array([max(real[k][i] for k in fitted_on) for i in calib], dtype=float)
    sizes = {g: sum(1 for i in calib if texts[i].group == g) for g in {texts[i].group for i in calib}}
    weight = np.array([1.0 / sizes[texts[i].group] for i in calib])
    root = np.sqrt(weight)[:, None]
    w = _nnls(x / target[:, None] * root, root[:, 0])
    exposure = (x * (weight / target)[:, None]).sum(axis=0)  # relative over-count per unit of each weight
    for _ in range(10_000):
        est = x @ w
        worst = int(np.argmax(target / est))
        if target[worst] <= est[worst] + 1e-9:
            break
        need = target[worst] - est[worst]
        cost = np.where(x[worst] > 0, need / np.maximum(x[worst], 1e-12) * exposure, np.inf)
        c = int(np.argmin(cost))
        w[c] += need / x[worst, c] * 1.0001
    return {c: math.ceil(float(v) * 100) / 100 for c, v in zip(CLASSES, w, strict=True)}


def cookbook_tools(tools: list[dict[str, object]], count: Counter) -> int:
    """The OpenAI cookbook's rule for function schemas on gpt-4o (func_init 7, prop 3 + 3, enum -3 + 3, end 12)."""
    total = 12
    for tool in tools:
        fn = tool["function"]
        assert isinstance(fn, dict)
        total += 7 + count(f"{fn['name']}:{str(fn.get('description', '')).rstrip('.')}")
        props = fn.get("parameters", {}).get("properties", {})
        if props:
            total += 3
        for key, prop in props.items():
            total += 3
            if "enum" in prop:
                total += -3 + sum(3 + count(str(item)) for item in prop["enum"])
            total += count(f"{key}:{prop.get('type', '')}:{str(prop.get('description', '')).rstrip('.')}")
    return total


def report(texts: list[Text], real: dict[str, list[int]], weights: dict[str, float], fitted_on: list[str]) -> str:
    est = EstimateTokenizer(weights=weights)
    flat = EstimateTokenizer(chars_per_token=ANTHROPIC_CHARS_PER_TOKEN)
    estimate = [est.count(t.text) for t in texts]
    old = [flat.count(t.text) for t in texts]
    groups = list(dict.fromkeys(t.group for t in texts))
    names = list(real)
    lines = [
        "| group | texts | characters | " + " | ".join(names) + " | 3.5 chars/token vs o200k |",
        "| --- | ---: | ---: | " + " | ".join("---:" for _ in names) + " | ---: |",
    ]
    for g in groups:
        idx = [i for i, t in enumerate(texts) if t.group == g]
        cells = []
        for k in names:
            total = sum(estimate[i] for i in idx) / sum(real[k][i] for i in idx)
            worst = min(estimate[i] / real[k][i] for i in idx)
            cells.append(f"{total:.2f} (min {worst:.2f})")
        old_ratio = sum(old[i] for i in idx) / sum(real["o200k_base"][i] for i in idx)
        chars = sum(len(texts[i].text) for i in idx)
        lines.append(f"| {g} | {len(idx)} | {chars:,} | " + " | ".join(cells) + f" | {old_ratio:.2f} |")
    held = [i for i, t in enumerate(texts) if t.held_out]
    worst_held = max((real[k][i] / estimate[i], k, texts[i].group) for k in fitted_on for i in held)
    uncovered = [
        (k, texts[i].group, real[k][i], estimate[i])
        for k in fitted_on
        for i in range(len(texts))
        if real[k][i] > math.ceil(estimate[i] * (1 + ESTIMATE_MARGIN))
    ]
    worst_flat = min((old[i] / real[k][i], k, texts[i].group) for k in fitted_on for i in range(len(texts)))
    small = "smollm2-135m"
    worst_small = max((real[small][i] / estimate[i], texts[i].group) for i in range(len(texts)))
    small_uncovered = sum(real[small][i] > math.ceil(estimate[i] * (1 + ANY_MODEL_MARGIN)) for i in range(len(texts)))
    cl_over_o = max((real["cl100k_base"][i] / real["o200k_base"][i], texts[i].group) for i in range(len(texts)))
    out = [
        "Ratio estimate / real tokens per group and tokenizer: the sum over the group's texts, and (min) the",
        "smallest ratio for one text. Below 1.00 the estimate undercounts. Last column: the old rule.",
        "",
        *lines,
        "",
        f"- Fitted on: {', '.join(fitted_on)} (calibration half of every group). Weights: "
        + ", ".join(f"{c} {w:g}" for c, w in weights.items()),
        f"- Held-out texts: the largest real / estimate is {worst_held[0]:.3f} ({worst_held[1]}, {worst_held[2]});"
        f" the margin is {ESTIMATE_MARGIN:g}.",
        f"- Texts where real > ceil(estimate x (1 + margin)), fitted tokenizers: {len(uncovered)}"
        + (f" ({'; '.join(f'{k} {g}: {r} > {e}' for k, g, r, e in uncovered[:6])})" if uncovered else ""),
        f"- The old rule (3.5 characters per token) at its worst counts {worst_flat[0]:.2f} of the real tokens "
        f"({worst_flat[1]}, {worst_flat[2]}): {1 / worst_flat[0]:.1f}x too low.",
        f"- cl100k_base / o200k_base, largest for one text: {cl_over_o[0]:.3f} ({cl_over_o[1]}).",
        f"- SmolLM2 (not fitted on), largest real / estimate: {worst_small[0]:.3f} ({worst_small[1]}); texts above "
        f"estimate x (1 + {ANY_MODEL_MARGIN:g}) (the margin for a server whose model is unknown): {small_uncovered}.",
    ]
    return "\n".join(out)


def tools_report(count: Counter) -> str:
    tools = json.loads((DATA / "tools.json").read_text(encoding="utf-8"))
    rows = ["| schema | JSON (o200k) | cookbook rule | JSON / rule |", "| --- | ---: | ---: | ---: |"]
    for tool in tools:
        as_json = count(json.dumps(tool, ensure_ascii=False, separators=(",", ":")))
        rule = cookbook_tools([tool], count) - 12
        rows.append(f"| {tool['function']['name']} | {as_json} | {rule} | {as_json / rule:.2f} |")
    all_json = sum(count(json.dumps(t, ensure_ascii=False, separators=(",", ":"))) for t in tools)
    rows.append(f"| all 8 (rule adds 12 once) | {all_json} | {cookbook_tools(tools, count)} | "
                f"{all_json / cookbook_tools(tools, count):.2f} |")  # fmt: skip
    return "\n".join(rows)


def chat_report() -> str:
    smol = load_model("local:smollm2")
    est = EstimateTokenizer()
    cases = {
        "user only": [{"role": "user", "content": "What is the capital of France?"}],
        "system + user": [
            {"role": "system", "content": "Answer in one word."},
            {"role": "user", "content": "What is the capital of France?"},
        ],
        "4 turns": [
            {"role": "system", "content": "Answer in one word."},
            {"role": "user", "content": "Capital of France?"},
            {"role": "assistant", "content": "Paris"},
            {"role": "user", "content": "And of Italy?"},
        ],
    }
    rows = ["| messages | SmolLM2 template (real) | content alone | estimate (content + allowance) |",
            "| --- | ---: | ---: | ---: |"]  # fmt: skip
    for label, msgs in cases.items():
        real = smol.count_tokens(msgs)
        content = sum(smol.tokenizer.encode(m["content"]).__len__() for m in msgs)
        rows.append(f"| {label} | {real} | {content} | {est.count_messages(msgs)} |")
    rows.append("")
    rows.append(f"Allowance: {ESTIMATE_TOKENS_PER_MESSAGE} tokens per message and {ESTIMATE_REPLY_TOKENS} per request "
                "(SmolLM2's template adds a default system prompt when none is given).")  # fmt: skip
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fit", action="store_true", help="fit the weights on the calibration half and print them")
    parser.add_argument("--claude-json", type=Path, help="claude.json of @anthropic-ai/tokenizer 0.0.4 (reference)")
    parser.add_argument("--out", type=Path, help="write the Markdown report here")
    args = parser.parse_args(argv)
    texts = corpus()
    counters = tokenizers(args.claude_json)
    real = {name: [count(t.text) for t in texts] for name, count in counters.items()}
    # Large vocabularies (hosted models' tokenizers are of this kind); SmolLM2's 49k vocabulary is what
    # ANY_MODEL_MARGIN is measured on.
    fitted_on = [k for k in real if k != "smollm2-135m"]
    weights = fit(texts, real, fitted_on) if args.fit else dict(SCRIPT_WEIGHTS)
    if args.fit:
        print("SCRIPT_WEIGHTS =", json.dumps(weights, indent=4))
    body = [
        "# Token estimate against real tokenizers",
        "",
        "Command: `PYTHONPATH=src python benchmarks/bench_estimate.py --claude-json package/claude.json "
        "--out docs/results/bench-estimate/README.md` (claude.json from `npm pack @anthropic-ai/tokenizer@0.0.4`).",
        f"Corpus: {len(texts)} texts, {sum(len(t.text) for t in texts):,} characters (benchmarks/data/README.md).",
        "",
        "## Estimate per script and tokenizer",
        "",
        report(texts, real, weights, fitted_on),
        "",
        "## Tool schemas: compact JSON against the OpenAI cookbook's rule (gpt-4o constants, o200k_base)",
        "",
        tools_report(counters["o200k_base"]),
        "",
        "## Chat overhead",
        "",
        chat_report(),
        "",
        "## What these numbers set in litm",
        "",
        "- `SCRIPT_WEIGHTS` (litm/models/tokenizers/estimate.py): the fitted weights above.",
        f"- `ESTIMATE_MARGIN` = {ESTIMATE_MARGIN:g}: every held-out text of every fitted tokenizer is within it;"
        " it also stands for the current Claude tokenizers, which are not published (the legacy one is only"
        " reference data).",
        f"- `ANY_MODEL_MARGIN` = {ANY_MODEL_MARGIN:g}: an OpenAI-compatible server without `tokenizer=` may run a"
        " small-vocabulary model; SmolLM2 stays within it on every text.",
        "- Unknown OpenAI model ids get the estimate, not one encoding plus a margin: cl100k_base and"
        " o200k_base differ by up to the factor above on one text.",
        "- Tool schemas stay counted as compact JSON: it exceeds the cookbook's rule on every schema here,"
        " so the JSON count is the safer number; `TOOL_SCHEMA_MARGIN` (0.1) and `TOOLS_OVERHEAD_TOKENS`"
        " (12 for OpenAI, 600 for Anthropic's tool-use system prompt) are stated, not measured: no provider"
        " could be reached from here.",
        "",
    ]
    text = "\n".join(body)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
