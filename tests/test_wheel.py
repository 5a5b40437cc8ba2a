"""The wheel as users get it: built from the tree, installed (not editable) in a fresh virtual environment, and run.

A data file the wheel forgets (the bundled corpus, the price table) makes the end-to-end command fail here, where
the editable checkout would still find it in ``src/``. The new environment reuses this one's installed dependencies
(a path entry to its site-packages, whose ``.pth`` files, the editable litm's among them, are not processed), so
the test needs no network; ``litm.__file__`` proves the wheel's copy is the one imported.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.wheel


def _run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(args, capture_output=True, text=True, env=env, timeout=240, cwd=cwd)
    assert result.returncode == 0, f"{' '.join(args)}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with litm installed from a wheel built now; its bin folder."""
    pytest.importorskip("hatchling", reason="the wheel is built without isolation: pip install hatchling (in dev)")
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    pip = [sys.executable, "-m", "pip"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w", str(dist), str(ROOT)])
    (wheel,) = dist.glob("litm-*.whl")
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    _run([*pip, "--python", str(python), "install", "--no-deps", "--no-index", "--quiet", str(wheel)])
    # After the wheel's own files: this environment's dependencies (typer, jinja2, bpe-openai, ...), as paths.
    (purelib / "zz_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    return env_dir / "bin"


def test_the_installed_wheel_is_the_litm_imported(installed: Path) -> None:
    out = _run(
        [str(installed / "python"), "-c", "import json, litm; print(json.dumps([litm.__file__, litm.__version__]))"],
        cwd=installed,
    )
    path, version = json.loads(out.stdout)
    assert Path(path).is_relative_to(installed.parent), path
    assert not Path(path).is_relative_to(ROOT / "src")
    assert version == _run([sys.executable, "-c", "import litm; print(litm.__version__)"]).stdout.strip()


def test_an_end_to_end_command_runs_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    # The probe's dry run reads the bundled NQ corpus and the shipped price table, and writes nothing.
    out = _run(
        [str(installed / "litm"), "probe", "--model", "openai:gpt-4o-mini", "--dry-run", "--out", str(tmp_path / "p")],
        cwd=tmp_path,
    )
    assert "calls to run: 160" in out.stdout and "estimated cost: $" in out.stdout
    assert not (tmp_path / "p").exists()


def test_the_wheel_ships_every_data_file(installed: Path) -> None:
    code = (
        "import importlib.resources as r, json;"
        "print(json.dumps(sorted(p.name for d in ('litm.data', 'litm.spend.data', 'litm.retrieve.data')"
        " for p in r.files(d).iterdir())))"
    )
    shipped = set(json.loads(_run([str(installed / "python"), "-c", code], cwd=installed).stdout))
    in_tree = {
        p.name
        for d in ("src/litm/data", "src/litm/spend/data", "src/litm/retrieve/data")
        for p in (ROOT / d).iterdir()
        if not p.name.startswith(".")
    }
    assert in_tree <= shipped, sorted(in_tree - shipped)
