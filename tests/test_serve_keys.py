"""Virtual keys: shown once, stored only as a hash, compared in constant time, revocable, rotatable; reading
never creates the store; ``litm keys`` is one call of the same functions."""

from __future__ import annotations

import hmac
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from litm.errors import SpendRequestError, VirtualKeyError
from litm.serve import config_from_mapping, create_key, list_keys, revoke_key, rotate_key
from litm.serve._keys import KeyStore
from litm.spend import open_ledger

# A key reads sk-litm-<12 hex id>-<secret>; the secret (URL-safe base64) may itself hold dashes.
SECRET_AT = len("sk-litm-") + 13


def test_a_key_is_stored_only_as_a_hash(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys.db")
    plain, key = store.create(name="alice", scopes=["org:acme", "team:a"], models=["gpt-4o-mini"])
    secret = plain[SECRET_AT:]
    assert plain.startswith(f"sk-litm-{key.id}-") and len(secret) == 43
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert secret.encode() not in raw and plain.encode() not in raw
    rows = sqlite3.connect(tmp_path / "keys.db").execute("SELECT hash FROM keys").fetchall()
    assert len(rows) == 1 and len(rows[0][0]) == 64  # a sha256 hex digest, nothing else about the secret
    assert key.chain == ("org:acme", "team:a", f"key:{key.id}") and key.prefix.endswith("-...")
    got = store.authenticate(plain)
    assert got is not None and got.may_call("gpt-4o-mini") and not got.may_call("gpt-4o") and not got.compact
    compacting, _ = store.create(name="agents", compact=True, default_max_tokens=512)
    got = store.authenticate(compacting)
    assert got is not None and got.compact and got.default_max_tokens == 512


def test_authentication_refuses_everything_but_the_exact_active_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = KeyStore(tmp_path / "keys.db")
    plain, key = store.create(name="bob")
    other, _ = store.create(name="carol")
    secret = plain[SECRET_AT:]
    for wrong in ("", "sk-litm-", plain[:-1], plain + "x", plain.upper(), f"sk-litm-{key.id}-" + other[SECRET_AT:],
                  f"sk-litm-ffffffffffff-{secret}", plain.replace("sk-litm", "sk-lite")):  # fmt: skip
        assert store.authenticate(wrong) is None, wrong
    compared: list[tuple[str, str]] = []
    real = hmac.compare_digest
    monkeypatch.setattr(hmac, "compare_digest", lambda a, b: compared.append((a, b)) or real(a, b))
    assert store.authenticate(plain) is not None
    assert store.authenticate(f"sk-litm-ffffffffffff-{secret}") is None  # unknown id: still one comparison
    assert len(compared) == 2


def test_revoke_and_rotate(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys.db")
    plain, key = store.create(name="dave")
    new, rotated = store.rotate(key.id)
    assert rotated.id == key.id and rotated.chain == key.chain
    assert store.authenticate(plain) is None and store.authenticate(new) is not None
    revoked = store.revoke(key.id)
    assert revoked.revoked is not None and store.authenticate(new) is None
    with pytest.raises(VirtualKeyError, match="no active key"):
        store.rotate(key.id)
    with pytest.raises(VirtualKeyError, match="no key with id"):
        store.revoke("000000000000")


def test_reads_and_failed_writes_never_create_the_store(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "nothing" / "keys.db")
    assert store.list() == [] and store.authenticate("sk-litm-000000000000-" + "x" * 43) is None
    for change in (store.revoke, store.rotate):
        with pytest.raises(VirtualKeyError):
            change("000000000000")
    assert not (tmp_path / "nothing").exists()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": " "}, "non-empty name"),
        ({"name": "x", "models": []}, "models must be"),
        ({"name": "x", "default_max_tokens": 0}, "default_max_tokens"),
        ({"name": "x", "default_max_tokens": "5"}, "default_max_tokens"),
        ({"name": "x", "compact": "yes"}, "compact must be"),
        ({"name": "x", "scopes": ["bad scope"]}, "bad scope name"),
        ({"name": "x", "scopes": "org:acme"}, "not the string"),
    ],
)
def test_bad_key_options_are_typed_errors(tmp_path: Path, kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(SpendRequestError, match=match):
        KeyStore(tmp_path / "keys.db").create(**kwargs)  # type: ignore[arg-type]


def test_create_key_sets_the_keys_own_limit_in_the_ledger(tmp_path: Path) -> None:
    cfg = config_from_mapping({"ledger": {"url": str(tmp_path / "spend.db")},
                               "keys": {"store": str(tmp_path / "keys.db")}}, env={})  # fmt: skip
    _, key = create_key(cfg, name="erin", limit="2.50", window="daily", scopes=["org:acme"])
    ledger = open_ledger(cfg.ledger.url)
    try:
        assert [(lim.scope, lim.window, lim.micros) for lim in ledger.limits()] == [(key.scope, "daily", 2_500_000)]
    finally:
        ledger.close()
    assert [k.id for k in list_keys(cfg)] == [key.id]
    assert rotate_key(cfg, key.id)[1].id == key.id and revoke_key(cfg, key.id).revoked is not None
    with pytest.raises(SpendRequestError):
        create_key(cfg, name="x", limit=0.5)  # type: ignore[arg-type]  # floats never hold money
    with pytest.raises(SpendRequestError):
        create_key(cfg, name="x", limit="1", window="weekly")  # type: ignore[arg-type]


def _litm(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "litm", *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def test_litm_keys_command_line(tmp_path: Path) -> None:
    (tmp_path / "g.toml").write_text('[ledger]\nurl = "spend.db"\n[keys]\nstore = "keys.db"\n', encoding="utf-8")
    listed = _litm("keys", "list", "--config", "g.toml", cwd=tmp_path)
    assert listed.returncode == 0 and listed.stdout == "" and not (tmp_path / "keys.db").exists()
    made = _litm("keys", "create", "--config", "g.toml", "--name", "ci", "--limit", "5", "--window", "daily",
                 "--scope", "org:acme", "--model", "gpt-4o-mini", "--json", cwd=tmp_path)  # fmt: skip
    assert made.returncode == 0, made.stderr
    out = json.loads(made.stdout)
    assert out["key"].startswith(f"sk-litm-{out['id']}-") and out["chain"] == ["org:acme", f"key:{out['id']}"]
    listed = _litm("keys", "list", "--config", "g.toml", cwd=tmp_path)
    assert out["id"] in listed.stdout and "active" in listed.stdout and out["key"] not in listed.stdout
    assert out["key"][SECRET_AT:] not in listed.stdout
    rotated = _litm("keys", "rotate", out["id"], "--config", "g.toml", cwd=tmp_path)
    assert rotated.returncode == 0 and rotated.stdout.strip() != out["key"]
    revoked = _litm("keys", "revoke", out["id"], "--config", "g.toml", cwd=tmp_path)
    assert revoked.returncode == 0 and "revoked" in revoked.stdout
    missing = _litm("keys", "revoke", "000000000000", "--config", "g.toml", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.startswith("litm: error: no key with id")
