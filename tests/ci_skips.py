"""In CI a skipped test is a failure: a missing extra, model or server must turn the build red, not green.

Loaded by ``tests/conftest.py`` (and usable alone with ``pytest -p ci_skips``). When the environment variable
``CI`` is set (GitHub Actions, GitLab and most other services set ``CI=true``), every skip, whether it comes
from ``pytest.skip``, ``importorskip``, a ``skipif`` marker, a fixture or a whole module, is reported as a
failure that keeps the skip's reason. Locally skips stay skips, so a contributor without the model files
can still run the rest. An expected failure (``xfail``) is not a skip and is left alone.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

__all__ = [
    "in_ci",
    "pytest_make_collect_report",
    "pytest_runtest_makereport",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
]

_SKIPPED_MODULES = pytest.StashKey[list[tuple[str, str]]]()


def in_ci() -> bool:
    """Whether this run is CI's: ``CI`` is set to anything but an empty string, ``0`` or ``false``."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def _reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (path, line, "Skipped: reason")
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _fail(report: pytest.CollectReport | pytest.TestReport) -> None:
    report.outcome = "failed"
    report.longrepr = f"skipped in CI (CI is set, so a skip is a failure): {_reason(report)}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, Any]:
    report = yield
    if in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        _fail(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    report = yield
    # A module that skips itself (importorskip or pytest.skip at module level) skips every test in it. Failing
    # its collection would interrupt the whole run, so it is recorded here and fails the session at the end.
    if in_ci() and report.skipped:
        collector.config.stash.setdefault(_SKIPPED_MODULES, []).append((report.nodeid, _reason(report)))
    return report


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    skipped = config.stash.get(_SKIPPED_MODULES, [])
    if skipped:
        terminalreporter.section("skipped in CI (CI is set, so a skip is a failure)", red=True)
        for nodeid, reason in skipped:
            terminalreporter.line(f"{nodeid}: {reason}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if session.config.stash.get(_SKIPPED_MODULES, []) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
