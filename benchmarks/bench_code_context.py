"""Code context on the standard library: tokens against whole files, callers against jedi's references.

A copy of a few standard-library packages and modules (jedi's ``get_references`` does not search the
installed standard library itself, so the sources are copied; they are not changed) is the repository.
From it, a seeded sample of functions and methods (no dunders, no properties, names of 3+ characters,
which jedi's project search skips below) is each made a target, and for each target:

* **tokens**: the context litm builds with no budget limit, against the target's whole file, both counted
  with tiktoken ``cl100k_base`` (GPT-4), offline;
* **callers**: the set of (file, enclosing function) of the target's call sites, from litm's exact resolver
  (jedi per candidate call site, through ``import ... as`` aliases) and from a name-matching baseline in the
  manner of aider's repo map (a call whose callee has the target's name counts), each against the ground
  truth: jedi's own ``Script.get_references`` from the definition, with its 30-parsed-files limit lifted,
  plus the references of every ``import ... as`` alias it finds, kept where they are call sites;
* **time** per context (litm exact, name baseline, and the ground-truth query), wall clock.

    PYTHONPATH=src python benchmarks/bench_code_context.py --n 120 --out docs/results/bench-code-context
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sysconfig
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jedi
import jedi.inference.references as jedi_references

from litm.code import CodeOptions, code_context
from litm.code._context import make_workspace
from litm.code._source import Definition, FileIndex, Workspace
from litm.tokens import get_tokenizer

STDLIB = Path(sysconfig.get_paths()["stdlib"])
PACKAGES = ("json", "email", "http", "urllib", "logging", "html", "concurrent")
MODULES = ("locale.py", "gettext.py", "quopri.py", "base64.py", "textwrap.py", "shlex.py", "calendar.py",
           "difflib.py", "fnmatch.py", "string.py", "csv.py", "argparse.py", "stringprep.py", "traceback.py",
           "mimetypes.py", "ftplib.py", "smtplib.py", "imaplib.py", "configparser.py", "tarfile.py")  # fmt: skip
Key = tuple[str, str]


def copy_sources(root: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "test", "tests")
    for pkg in PACKAGES:
        shutil.copytree(STDLIB / pkg, root / pkg, ignore=ignore)
    for mod in MODULES:
        shutil.copy2(STDLIB / mod, root / mod)
    return root


def candidates(ws: Workspace) -> list[tuple[FileIndex, Definition]]:
    out = []
    for path in ws.files("python"):
        fi = ws.index(path)
        for d in fi.definitions:
            decorators = fi.segment(d.start, d.name_line)
            if not d.callable or d.name.startswith("__") or len(d.name) < 3 or "@property" in decorators \
                    or ".setter" in decorators or d.qualname.count(".") > (1 if d.kind == "method" else 0):
                continue  # fmt: skip
            if sum(x.qualname == d.qualname for x in fi.definitions) == 1:  # skip ambiguous (redefined) names
                out.append((fi, d))
    return out


def caller_key(fi: FileIndex, line: int) -> Key:
    enc = fi.enclosing(line, callable_only=True) or fi.enclosing(line)
    return (fi.rel, enc.qualname if enc else "<module>")


def jedi_callers(ws: Workspace, project: Any, fi: FileIndex, d: Definition) -> set[Key]:
    """Ground truth: jedi's references from the definition (and from its import-as aliases) at call sites."""
    script = jedi.Script(code=ws.text(fi.path), path=str(fi.path), project=project)
    queue = [(script, d.name_line, d.name_col)]
    seen: set[tuple[str, int, int]] = set()
    refs = []
    while queue:
        s, line, col = queue.pop()
        for ref in s.get_references(line, col, scope="project"):
            if ref.module_path is None or ref.module_path.suffix != ".py":
                continue
            key = (str(ref.module_path), ref.line, ref.column)
            if key in seen:
                continue
            seen.add(key)
            refs.append(ref)
            # "from m import name as alias": the alias's own references are calls of the target too.
            code = ref.module_path.read_text(errors="replace").splitlines()[ref.line - 1]
            alias = code[ref.column + len(ref.name):].split(",")[0].split(")")[0].strip()
            if ref.type != "function" and "import" in code and alias.startswith("as "):
                name = alias[3:].strip()
                other = jedi.Script(code=ref.module_path.read_text(errors="replace"), path=str(ref.module_path),
                                    project=project)  # fmt: skip
                queue.append((other, ref.line, code.index(name, ref.column + len(ref.name))))
    out: set[Key] = set()
    for ref in refs:
        path = Path(ref.module_path).resolve()
        try:
            ri = ws.index(path)
        except (ValueError, LookupError):
            continue
        if path == fi.path and d.start <= ref.line <= d.end:
            continue  # the definition itself and recursion
        if any(c.line == ref.line and c.col == ref.column for c in ri.calls):
            out.add(caller_key(ri, ref.line))
    return out


def callers_of(ctx: Any) -> set[Key]:
    return {(p.path, p.qualname) for p in ctx.pieces if p.kind == "caller"}


def prf(found: set[Key], truth: set[Key]) -> tuple[int, int, int]:
    return len(found & truth), len(found - truth), len(truth - found)


def summarise(rows: list[dict[str, Any]], method: str) -> dict[str, Any]:
    tp = sum(r[method]["tp"] for r in rows)
    fp = sum(r[method]["fp"] for r in rows)
    fn = sum(r[method]["fn"] for r in rows)
    with_callers = [r for r in rows if r["truth"]]
    recalls = [r[method]["tp"] / len(r["truth"]) for r in with_callers]
    precisions = [r[method]["tp"] / (r[method]["tp"] + r[method]["fp"]) for r in rows
                  if r[method]["tp"] + r[method]["fp"]]  # fmt: skip
    times = [r[method]["seconds"] for r in rows]
    return {
        "recall_micro": tp / (tp + fn) if tp + fn else None,
        "precision_micro": tp / (tp + fp) if tp + fp else None,
        "recall_macro": statistics.mean(recalls) if recalls else None,
        "precision_macro": statistics.mean(precisions) if precisions else None,
        "tp": tp, "fp": fp, "fn": fn,
        "median_context_tokens": statistics.median(r[method]["tokens"] for r in rows),
        "median_ratio_to_file": statistics.median(r[method]["tokens"] / r["file_tokens"] for r in rows),
        "median_seconds": statistics.median(times),
        "p90_seconds": sorted(times)[int(0.9 * (len(times) - 1))],
    }  # fmt: skip


def fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def markdown(summary: dict[str, Any], meta: dict[str, Any]) -> Iterable[str]:
    e, n = summary["exact"], summary["name"]
    yield (f"{meta['targets']} targets ({meta['with_callers']} with at least one caller in the ground truth), "
           f"{meta['files']} files copied from Python {meta['python']}'s standard library; tokenizer "
           f"{meta['tokenizer']}; jedi {meta['jedi']}; seed {meta['seed']}.\n")
    yield "| | litm exact (jedi per call site) | name-matching baseline (aider-style) |"
    yield "| --- | --- | --- |"
    yield f"| caller recall, micro (TP / (TP+FN)) | {fmt(e['recall_micro'])} | {fmt(n['recall_micro'])} |"
    yield f"| caller precision, micro (TP / (TP+FP)) | {fmt(e['precision_micro'])} | {fmt(n['precision_micro'])} |"
    yield f"| caller recall, mean over targets with callers | {fmt(e['recall_macro'])} | {fmt(n['recall_macro'])} |"
    yield f"| caller precision, mean over targets with any found | {fmt(e['precision_macro'])} | " \
          f"{fmt(n['precision_macro'])} |"  # fmt: skip
    yield f"| TP / FP / FN (callers) | {e['tp']} / {e['fp']} / {e['fn']} | {n['tp']} / {n['fp']} / {n['fn']} |"
    yield f"| median context tokens (no budget) | {e['median_context_tokens']:.0f} | " \
          f"{n['median_context_tokens']:.0f} |"  # fmt: skip
    yield f"| median context / whole-file tokens | {fmt(e['median_ratio_to_file'])} | " \
          f"{fmt(n['median_ratio_to_file'])} |"  # fmt: skip
    yield f"| median / p90 seconds per context | {fmt(e['median_seconds'], 2)} / {fmt(e['p90_seconds'], 2)} | " \
          f"{fmt(n['median_seconds'], 2)} / {fmt(n['p90_seconds'], 2)} |"  # fmt: skip
    yield ""
    yield f"Median whole-file tokens: {meta['median_file_tokens']:.0f}. Ground-truth query (jedi get_references): " \
          f"median {meta['truth_median_seconds']:.2f} s per target."  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=120, help="number of target functions sampled")
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--out", type=Path, default=None, help="folder for results.json and summary.md")
    ap.add_argument("--render", type=Path, default=None, help="only re-render summary.md from a results.json")
    args = ap.parse_args()
    if args.render:
        saved = json.loads(args.render.read_text())
        text = "\n".join(markdown(saved["summary"], saved["meta"]))
        (args.render.parent / "summary.md").write_text(text + "\n")
        print(text)
        return
    jedi_references._PARSED_FILE_LIMIT = 100_000  # the ground truth must not stop after 30 files
    tok = get_tokenizer("openai:gpt-4")
    with tempfile.TemporaryDirectory(prefix="bench-code-context-") as tmp:
        root = copy_sources(Path(tmp))
        ws = make_workspace(root)
        project = jedi.Project(str(root))
        pool = candidates(ws)
        sample = random.Random(args.seed).sample(pool, min(args.n, len(pool)))
        rows = []
        for i, (fi, d) in enumerate(sample, 1):
            target = f"{fi.rel}::{d.qualname}"
            t0 = time.perf_counter()
            truth = jedi_callers(ws, project, fi, d)
            truth_s = time.perf_counter() - t0
            row: dict[str, Any] = {"target": target, "truth": sorted(truth), "truth_seconds": truth_s,
                                   "file_tokens": tok.count(ws.text(fi.path))}  # fmt: skip
            for method in ("exact", "name"):
                t0 = time.perf_counter()
                ctx = code_context(root, target, budget=10**7, counter=tok,
                                   options=CodeOptions(resolution=method, max_sites=None))
                seconds = time.perf_counter() - t0
                found = callers_of(ctx)
                tp, fp, fn = prf(found, truth)
                row[method] = {"tp": tp, "fp": fp, "fn": fn, "tokens": ctx.tokens, "seconds": seconds,
                               "found": sorted(found), "pieces": len(ctx.pieces)}  # fmt: skip
            rows.append(row)
            print(f"[{i:>3}/{len(sample)}] {target:<60} truth {len(truth):>2}  exact {row['exact']['tp']}/"
                  f"{row['exact']['fp']}/{row['exact']['fn']}  name {row['name']['tp']}/{row['name']['fp']}/"
                  f"{row['name']['fn']}  {row['exact']['seconds']:.1f}s", flush=True)
        files = len(ws.files("python"))
    summary = {m: summarise(rows, m) for m in ("exact", "name")}
    meta = {
        "targets": len(rows), "with_callers": sum(1 for r in rows if r["truth"]), "files": files,
        "python": sysconfig.get_python_version(), "tokenizer": tok.name, "seed": args.seed,
        "median_file_tokens": statistics.median(r["file_tokens"] for r in rows),
        "truth_median_seconds": statistics.median(r["truth_seconds"] for r in rows),
        "packages": PACKAGES, "modules": MODULES, "jedi": jedi.__version__,
    }  # fmt: skip
    text = "\n".join(markdown(summary, meta))
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows}, indent=1))
        (args.out / "summary.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
