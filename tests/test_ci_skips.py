"""The CI rule of ci_skips.py, run on a throwaway test suite in a child pytest: skips fail in CI only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SUITE = '''
import pytest

def test_passes():
    pass

def test_skips():
    pytest.skip("needs the SmolLM2 model file")

@pytest.mark.skipif(True, reason="needs a GPU")
def test_marked():
    pass

@pytest.fixture
def server():
    pytest.skip("llama.cpp server extra missing")

def test_fixture_skips(server):
    pass

@pytest.mark.xfail(reason="known bug", strict=True)
def test_expected_failure():
    assert False
'''

MODULE_SKIP = '''
import pytest
pytest.importorskip("a_package_that_is_not_installed_anywhere")

def test_never_runs():
    pass
'''


def _run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_suite.py").write_text(SUITE, encoding="utf-8")
    (tmp_path / "test_module_skip.py").write_text(MODULE_SKIP, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "ci_skips", "-p", "no:cacheprovider", "-q", "-rfEs", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("ci", ["true"])
def test_in_ci_every_skip_fails_with_its_reason(tmp_path: Path, ci: str) -> None:
    proc = _run(tmp_path, ci)
    assert proc.returncode == 1, proc.stdout
    out = proc.stdout
    for reason in ("needs the SmolLM2 model file", "needs a GPU", "llama.cpp server extra missing"):
        assert f"skipped in CI (CI is set, so a skip is a failure): {reason}" in out, out
    # A module that skips itself is named with its reason, and the rest of the run still goes on.
    assert "test_module_skip.py: could not import 'a_package_that_is_not_installed_anywhere'" in out, out
    # A skip in a test fails it (in setup: an error); the module's own skip fails the session; xfail is no skip.
    assert "1 failed, 1 passed, 1 skipped, 1 xfailed, 2 errors" in out.splitlines()[-1], out


@pytest.mark.parametrize("ci", [None, "false"])
def test_outside_ci_skips_stay_skips(tmp_path: Path, ci: str | None) -> None:
    proc = _run(tmp_path, ci)
    assert proc.returncode == 0, proc.stdout
    assert "1 passed, 4 skipped, 1 xfailed" in proc.stdout.splitlines()[-1], proc.stdout
