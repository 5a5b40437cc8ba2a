"""Plugins published by another package's entry points: selectable by name in Python and on the CLI.

A throwaway distribution (a module plus a ``*.dist-info`` with ``entry_points.txt``) is put on the path of
a child interpreter, exactly as ``pip install`` of a plugin package would leave it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGIN = '''
from litm.models._base import Completion, Model
from litm.placement import Strategy
from litm.placement._strategies import Edges


class FirstLast(Strategy):
    name = "first-last"

    def arrange(self, n):
        return [0, *range(2, n), 1] if n > 1 else list(range(n))


class Echo(Model):
    name = "echo"

    def __init__(self, target):
        self.spec = f"echo:{target}"
        self.target = target

    @property
    def context_window(self):
        return 1000

    @property
    def tokenizer(self):
        raise NotImplementedError

    def _generate(self, request):
        return Completion(f"{self.target}: {request.prompt}", 1, 1, 0.0, "stop", self.name)


def echo(spec, **options):
    return Echo(spec.target)


class NotPyramid(Edges):
    name = "pyramid"
'''


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plugin")
    (root / "litm_demo_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = root / "litm_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: litm-demo-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [litm.strategies]
            first-last = litm_demo_plugin:FirstLast
            pyramid = litm_demo_plugin:NotPyramid

            [litm.backends]
            echo = litm_demo_plugin:echo
            """
        ),
        encoding="utf-8",
    )
    return root


def _run(plugin_path: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), *sys.path])}
    return subprocess.run(
        [sys.executable, *args], input=stdin, capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_a_plugin_strategy_is_selectable_on_the_command_line(plugin_path: Path) -> None:
    docs = "\n".join(json.dumps({"id": f"d{i}", "text": f"doc {i}"}) for i in range(1, 6))
    done = _run(plugin_path, "-m", "litm", "place", "--strategy", "first-last", stdin=docs)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == ["d1", "d3", "d4", "d5", "d2"]


def test_plugins_in_python_and_builtins_are_never_replaced(plugin_path: Path) -> None:
    code = textwrap.dedent(
        """
        import litm
        from litm.models import backends, load_model
        from litm.placement import strategy_names
        print("first-last" in strategy_names(), "echo" in backends())
        print(load_model("echo:hi").complete("ping").text)
        # The plugin's "pyramid" does not displace the built-in one.
        print(litm.place(["a", "b", "c", "d", "e"], "pyramid").items)
        """
    )
    done = _run(plugin_path, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True True", "hi: ping", "('b', 'd', 'e', 'c', 'a')"]


def test_an_unknown_strategy_names_the_plugins_too(plugin_path: Path) -> None:
    done = _run(plugin_path, "-m", "litm", "place", "--strategy", "nope", stdin='{"text": "x"}\n')
    assert done.returncode == 2 and "first-last" in done.stderr
