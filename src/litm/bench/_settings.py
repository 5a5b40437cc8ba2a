"""What a benchmark run records about itself (``run.json``), and whether a resume may continue it.

The ``identity`` part holds the settings that define the prompts and their scoring; a resume with any of
them changed is refused, since its rows would mix two experiments under one set of keys.

Example:
    >>> recorded_batch("no/such/run") is None
    True
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict
from pathlib import Path
from typing import TypedDict

from litm._version import __version__
from litm.bench._config import BenchConfig, BenchError
from litm.bench._sources import describe
from litm.eval._results import changed_settings
from litm.eval._runs import model_mode
from litm.models import Model

__all__ = [
    "BATCH_BEFORE_SETTING",
    "COMPRESS_SCORES",
    "RESULTS",
    "SETTINGS",
    "check_resume",
    "recorded_batch",
    "run_settings",
]

#: The llama.cpp batch of local-model runs recorded before the batch was part of a run's identity.
BATCH_BEFORE_SETTING = 512
RESULTS = "bench.jsonl"
#: The compression arms' score cache (JSON Lines), so a resumed run does not score again.
COMPRESS_SCORES = "compress-scores.jsonl"
SETTINGS = "run.json"
#: The value of each identity setting in runs recorded before it existed.
_IDENTITY_DEFAULTS: dict[str, object] = {
    "prompt_format": "completion",
    "likelihood": False,
    "data": "nq",
    "retriever": "auto",
}


class RunSettings(TypedDict, total=False):
    """``run.json``: what makes the run this experiment (``identity``, checked on resume) and where it ran."""

    identity: dict[str, object]
    config: dict[str, object]
    model: dict[str, object]
    command: str | None
    litm_version: str
    machine: dict[str, object]
    started: str
    data: str
    resumes: list[dict[str, object]]
    left_out: list[str]


def run_settings(model: Model, config: BenchConfig, command: str | None) -> RunSettings:
    """The ``run.json`` of a run of ``config`` on ``model``: its identity, the full config, the model and machine."""
    return {
        "identity": {
            **config.identity(),
            "model": getattr(model, "spec", "") or model.name,
            "mode": model_mode(model),
            "prompt_format": config.resolved_format(model),
            "likelihood": config.resolved_likelihood(model),
            # A local model's batch is part of what it computes (and of what aligned reuse keeps).
            **({"n_batch": batch} if isinstance(batch := getattr(model, "n_batch", None), int) else {}),
        },
        "config": {
            **asdict(config),
            "ks": list(config.ks),
            "strategies": list(config.strategies),
            "ablation_arms": list(config.ablation_arms),
            "compress_arms": list(config.compress_arms),
            "compress_ratios": list(config.compress_ratios),
            "compress_slots": list(config.compress_slots),
            "compress_designs": list(config.compress_designs),
        },
        "model": {
            "name": model.name,
            "spec": getattr(model, "spec", ""),
            "mode": model_mode(model),
            "threads": getattr(model, "n_threads", None),
            "n_batch": getattr(model, "n_batch", None),
            "prompt_format": config.resolved_format(model),
        },
        "command": command,
        "litm_version": __version__,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "data": describe(config.data, config.retriever),
    }


def check_resume(path: Path, settings: RunSettings, *, resume: bool) -> None:
    """Refuse to write into ``path``'s folder unless it is empty, or ``resume`` and the identity matches."""
    if not path.exists():
        return
    if not resume:
        raise BenchError(
            f"{path.parent} already holds a benchmark run; pass --resume to continue it or use another --out"
        )
    # Runs recorded before a setting existed used its then-only value (a local model's batch included).
    batch = {"n_batch": BATCH_BEFORE_SETTING} if "n_batch" in settings["identity"] else {}
    defaults = {**_IDENTITY_DEFAULTS, **batch}
    diffs = changed_settings(path, settings["identity"], defaults=defaults)
    if diffs:
        raise BenchError(f"{path.parent} holds a run with different settings ({', '.join(diffs)}); use another --out")


def recorded_batch(out_dir: str | Path) -> int | None:
    """The llama.cpp batch of the local-model run in ``out_dir`` (512 for runs recorded before the
    setting), or None when there is no run there or its model is not local: what a resume must load."""
    try:
        identity = json.loads((Path(out_dir) / SETTINGS).read_text(encoding="utf-8")).get("identity", {})
    except (OSError, json.JSONDecodeError):
        return None
    if not str(identity.get("model", "")).startswith("local"):
        return None
    return int(identity.get("n_batch", BATCH_BEFORE_SETTING))
