"""Virtual keys on a real redis-server: the same rules as the SQLite store, shared by two gateways at once (a key
made or revoked through one is known to the other at its next request), and a server that stops answering is a
503, never a pass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fixtures_redis import RedisServer
from litm.errors import SpendRequestError, VirtualKeyError
from litm.serve import GatewayConfig, config_from_mapping, create_app
from litm.serve._keys_redis import RedisKeyStore
from serve_support import StandIn, ThreadedServer

SECRET_AT = len("sk-litm-") + 13
ADMIN = "admin-key-0e4b7c1f9a2d"


def _raw_keys(server: RedisServer, namespace: str) -> list[str]:
    import redis

    client = redis.Redis.from_url(server.url, decode_responses=True)
    try:
        return sorted(client.scan_iter(match=f"litm:keys:{{{namespace}}}:*"))
    finally:
        client.close()


def test_keys_on_redis(redis_server: RedisServer, redis_namespace: str) -> None:
    store = RedisKeyStore(redis_server.url, namespace=redis_namespace)
    assert store.list() == [] and store.authenticate("sk-litm-000000000000-" + "x" * 43) is None
    for change in (store.revoke, store.rotate):
        with pytest.raises(VirtualKeyError):
            change("000000000000")
    assert _raw_keys(redis_server, redis_namespace) == []  # reading and failing wrote nothing
    plain, key = store.create(name="alice", scopes=["org:acme"], models=["gpt-4o-mini"], default_max_tokens=64,
                              compact=True)  # fmt: skip
    got = store.authenticate(plain)
    assert got == key and got.chain == ("org:acme", f"key:{key.id}")
    assert store.authenticate(plain[:-1] + ("A" if plain[-1] != "A" else "B")) is None
    raw = _raw_keys(redis_server, redis_namespace)
    assert plain[SECRET_AT:] not in repr(raw) and "alice" not in repr(raw)  # ids in key names, never secrets
    new, rotated = store.rotate(key.id)
    assert store.authenticate(plain) is None and store.authenticate(new) == rotated
    assert store.revoke(key.id).revoked is not None and store.authenticate(new) is None
    with pytest.raises(VirtualKeyError, match="no active key"):  # a revoked key is never rotated back to life
        store.rotate(key.id)
    assert [k.id for k in store.list()] == [key.id]
    with pytest.raises(SpendRequestError):
        store.create(name="x", scopes="org:acme")  # type: ignore[arg-type]
    assert "redis://" not in repr(store)
    store.close()


def _config(tmp: Path, upstream: str, redis_url: str, namespace: str) -> GatewayConfig:
    return config_from_mapping({
        "server": {"admin_key_env": "TEST_REDIS_GATEWAY_ADMIN"},
        "ledger": {"url": redis_url, "namespace": namespace}, "keys": {"store": redis_url, "namespace": namespace},
        "upstreams": {"local": {"kind": "openai-compatible", "base_url": upstream + "/v1"}},
        "models": {"cap-model": {"upstream": "local", "price": {"input": "0", "output": "1000"}}},
    }, env={})  # fmt: skip


@pytest.fixture
def upstream() -> Iterator[tuple[StandIn, str]]:
    double = StandIn()
    with ThreadedServer(double.app()) as server:
        yield double, server.url


def test_two_gateways_share_keys_on_redis(tmp_path: Path, redis_server: RedisServer, redis_namespace: str,
                                          upstream: tuple[StandIn, str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("TEST_REDIS_GATEWAY_ADMIN", ADMIN)
    cfg = _config(tmp_path, upstream[1], redis_server.url, redis_namespace)
    admin = {"authorization": f"Bearer {ADMIN}"}
    chat = {"model": "cap-model", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    with ThreadedServer(create_app(cfg)) as one, ThreadedServer(create_app(cfg)) as two:
        made = httpx.post(one.url + "/admin/keys", headers=admin, json={"name": "shared", "limit": "1"}).json()
        auth = {"authorization": f"Bearer {made['key']}"}
        assert httpx.post(two.url + "/v1/chat/completions", json=chat, headers=auth).status_code == 200
        httpx.post(two.url + f"/admin/keys/{made['id']}/revoke", headers=admin).raise_for_status()
        assert httpx.post(one.url + "/v1/chat/completions", json=chat, headers=auth).status_code == 401
    assert upstream[0].count() == 1


def test_a_key_store_that_stops_answering_is_503(tmp_path: Path, private_redis: RedisServer,
                                                  upstream: tuple[StandIn, str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("TEST_REDIS_GATEWAY_ADMIN", ADMIN)
    cfg = _config(tmp_path, upstream[1], private_redis.url, "down")
    plain, _ = RedisKeyStore(private_redis.url, namespace="down").create(name="t")
    chat = {"model": "cap-model", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    with ThreadedServer(create_app(cfg)) as gw:
        private_redis.stop()
        got = httpx.post(gw.url + "/v1/chat/completions", json=chat, headers={"authorization": f"Bearer {plain}"},
                         timeout=60)  # fmt: skip
        assert got.status_code == 503 and got.json()["error"]["code"] == "key_store_unavailable"
    assert upstream[0].count() == 0
