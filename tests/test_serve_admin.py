"""The admin HTTP API (keys, limits, ledger status) and ``/metrics``: the admin key only, one call of the same
functions as ``litm keys`` / ``litm spend``, typed 400s for bad input. The app runs in-process under uvicorn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from litm.serve import GatewayConfig, config_from_mapping, create_app
from serve_support import StandIn, ThreadedServer

ADMIN = "admin-key-5b1e0c7a9d3f"


def _config(tmp: Path, upstream: str, admin: bool = True) -> GatewayConfig:
    return config_from_mapping({
        "server": {"admin_key_env": "TEST_GATEWAY_ADMIN"} if admin else {},
        "ledger": {"url": str(tmp / "spend.db")}, "keys": {"store": str(tmp / "keys.db")},
        "upstreams": {"local": {"kind": "openai-compatible", "base_url": upstream + "/v1"}},
        "models": {"cap-model": {"upstream": "local", "price": {"input": "0", "output": "1000"}}},
    }, env={})  # fmt: skip


@pytest.fixture
def upstream() -> Iterator[tuple[StandIn, str]]:
    double = StandIn()
    with ThreadedServer(double.app()) as server:
        yield double, server.url


def test_admin_api_manages_keys_and_limits(tmp_path: Path, upstream: tuple[StandIn, str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("TEST_GATEWAY_ADMIN", ADMIN)
    admin = {"authorization": f"Bearer {ADMIN}"}
    chat = {"model": "cap-model", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    with ThreadedServer(create_app(_config(tmp_path, upstream[1]))) as gw, httpx.Client(base_url=gw.url) as c:

        def call(key: str) -> httpx.Response:
            return c.post("/v1/chat/completions", json=chat, headers={"authorization": f"Bearer {key}"})

        assert c.get("/admin/keys").status_code == 401
        new = {"name": "ci", "limit": "1", "window": "daily", "scopes": ["org:acme"], "models": ["cap-model"]}
        made = c.post("/admin/keys", headers=admin, json=new)
        assert made.status_code == 201, made.text
        plain, kid = made.json()["key"], made.json()["id"]
        assert made.json()["chain"] == ["org:acme", f"key:{kid}"]
        # The virtual key is no admin key.
        assert c.get("/admin/keys", headers={"authorization": f"Bearer {plain}"}).status_code == 401
        listed = c.get("/admin/keys", headers=admin)
        assert [k["id"] for k in listed.json()] == [kid] and plain[len("sk-litm-") + 13 :] not in listed.text
        # org:acme has no limit yet: a scope without a limit refuses (402), never unlimited.
        refused = call(plain)
        assert refused.status_code == 402 and refused.json()["error"]["code"] == "spend_limit_not_set"
        put = c.put("/admin/limits", headers=admin, json={"scope": "org:acme", "limit": "100", "window": "monthly"})
        assert put.json() == {"scope": "org:acme", "window": "monthly", "limit_micros": 100_000_000}
        assert call(plain).status_code == 200
        status = c.get("/admin/status", headers=admin, params={"scope": ["org:acme", f"key:{kid}"]}).json()
        assert {(s["scope"], s["window"]) for s in status} == {("org:acme", "monthly"), (f"key:{kid}", "daily")}
        assert all(s["settled_micros"] == 5_000 and s["held_micros"] == 0 for s in status)
        rotated = c.post(f"/admin/keys/{kid}/rotate", headers=admin).json()["key"]
        assert call(plain).status_code == 401 and call(rotated).status_code == 200
        assert c.post(f"/admin/keys/{kid}/revoke", headers=admin).json()["revoked"] is not None
        assert call(rotated).status_code == 401
        assert c.get("/metrics", headers=admin).status_code == 200
    assert upstream[0].count() == 2


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "match"),
    [
        ("POST", "/admin/keys", {"name": "x", "limit": 0.5}, 400, "dollars as a string"),
        ("POST", "/admin/keys", {"name": "x"}, 400, "missing field"),
        ("POST", "/admin/keys", {"name": "x", "limit": "1", "budget": "2"}, 400, "unknown field"),
        ("POST", "/admin/keys", {"name": "x", "limit": "1", "window": "weekly"}, 400, "unknown window"),
        ("POST", "/admin/keys", {"name": "x", "limit": "1", "scopes": "org:a"}, 400, "not the string"),
        ("POST", "/admin/keys/000000000000/revoke", None, 404, "no key with id"),
        ("PUT", "/admin/limits", {"scope": "bad scope", "limit": "1"}, 400, "bad scope name"),
        ("PUT", "/admin/limits", {"scope": "org:a", "limit": "-1"}, 400, "limit"),
        ("POST", "/admin/keys", {"name": "x" * 5_000_000, "limit": "1"}, 413, "over the gateway's limit"),
        ("POST", "/admin/keys", b"[" * 100_000 + b"]" * 100_000, 400, "not valid JSON"),  # nested too deep
    ],
)
def test_admin_api_refuses_bad_input(tmp_path: Path, upstream: tuple[StandIn, str], monkeypatch: pytest.MonkeyPatch,
                                     method: str, path: str, body: object, status: int,
                                     match: str) -> None:  # fmt: skip
    monkeypatch.setenv("TEST_GATEWAY_ADMIN", ADMIN)
    with ThreadedServer(create_app(_config(tmp_path, upstream[1]))) as gw:
        raw = {"content": body} if isinstance(body, bytes) else {"json": body}
        got = httpx.request(method, gw.url + path, **raw, headers={"authorization": f"Bearer {ADMIN}"})
    assert got.status_code == status and match in got.json()["error"]["message"]


def test_admin_api_is_off_without_an_admin_key(tmp_path: Path, upstream: tuple[StandIn, str]) -> None:
    with ThreadedServer(create_app(_config(tmp_path, upstream[1], admin=False))) as gw:
        for path in ("/admin/keys", "/metrics"):
            got = httpx.get(gw.url + path, headers={"authorization": "Bearer anything-at-all-here"})
            assert got.status_code == 404 and got.json()["error"]["code"] == "admin_disabled"
