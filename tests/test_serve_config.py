"""The gateway's configuration: one TOML file, every option also a variable, everything unknown refused; and the
start-up checks (prices, tokenizers, secrets) that refuse to start rather than refuse every request later."""

from __future__ import annotations

from pathlib import Path

import pytest

from litm.errors import GatewayConfigError, LitmError
from litm.serve import GatewayConfig, config_from_mapping, load_config
from litm.serve._runtime import build_runtime

UPSTREAM = {"oai": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1/", "api_key_env": "T_KEY"}}


def test_file_values_defaults_and_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "g.toml").write_text(
        '[server]\nport = 9001\nworkers = 3\n[ledger]\nurl = "data/spend.db"\n'
        '[upstreams.oai]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1/"\n'
        '[models."gpt-4o-mini"]\nupstream = "oai"\nmax_input_tokens = 5000\n',
        encoding="utf-8",
    )
    cfg = load_config(tmp_path / "g.toml", env={})
    assert (cfg.server.port, cfg.server.workers, cfg.server.host) == (9001, 3, "127.0.0.1")
    assert cfg.ledger.url == str(tmp_path / "data" / "spend.db")  # relative to the file, not the cwd
    assert cfg.keys.store == str(tmp_path / "keys.db")
    assert cfg.upstreams["oai"].base_url == "http://127.0.0.1:9/v1"
    assert cfg.models["gpt-4o-mini"].max_input_tokens == 5000


def test_every_option_is_also_an_environment_variable() -> None:
    env = {
        "LITM_SERVE__SERVER__PORT": "9100",
        "LITM_SERVE__SERVER__ACCESS_LOG": "false",
        "LITM_SERVE__LEDGER__URL": "redis://127.0.0.1:6379/0",
        "LITM_SERVE__LEDGER__LEASE_S": "60.5",
        "LITM_SERVE__UPSTREAMS__OAI__TIMEOUT_S": "5",
        "LITM_SERVE__MODELS__GPT_4O_MINI__MAX_INPUT_TOKENS": "64000",
        "LITM_SERVE__MODELS__GPT_4O_MINI__PRICE__INPUT": "0.2",
        "LITM_SERVE__UPSTREAMS__LOCAL__KIND": "openai-compatible",
        "LITM_SERVE__UPSTREAMS__LOCAL__BASE_URL": "http://127.0.0.1:8081/v1",
        "OTHER": "ignored",
    }
    cfg = config_from_mapping({"upstreams": UPSTREAM, "models": {"gpt-4o-mini": {"upstream": "oai"}}}, env=env)
    assert cfg.server.port == 9100 and cfg.server.access_log is False
    assert cfg.ledger.url == "redis://127.0.0.1:6379/0" and cfg.ledger.lease_s == 60.5
    assert cfg.upstreams["oai"].timeout_s == 5.0
    assert cfg.models["gpt-4o-mini"].max_input_tokens == 64000  # the dashed name matched as GPT_4O_MINI
    assert cfg.models["gpt-4o-mini"].price == {"input": "0.2"}
    assert cfg.upstreams["local"].kind == "openai-compatible" and cfg.upstreams["local"].provider == ""


@pytest.mark.parametrize(
    ("raw", "env", "match"),
    [
        ({"server": {"prot": 1}}, {}, "unknown option server.prot"),
        ({"sever": {}}, {}, "unknown section"),
        ({"server": {"port": "80"}}, {}, "server.port: expected an integer"),
        ({"server": {"port": 0}}, {}, "port must be 1-65535"),
        ({"server": {"graceful_timeout_s": -1}}, {}, "graceful_timeout_s must be"),
        ({"server": {"keep_alive_s": 0}}, {}, "keep_alive_s must be"),
        ({"server": {"http": "h2"}}, {}, "server.http: expected one of auto, httptools, h11"),
        ({}, {"LITM_SERVE__SERVER__LOOP": "trio"}, "server.loop: expected one of auto, uvloop, asyncio"),
        ({"ledger": {"socket_timeout_s": 0}}, {}, "ledger.socket_timeout_s must be"),
        ({}, {"LITM_SERVE__KEYS__SOCKET_TIMEOUT_S": "-2"}, "keys.socket_timeout_s must be"),
        ({}, {"LITM_SERVE__SERVER__PORT": "eighty"}, "expected an integer"),
        ({}, {"LITM_SERVE__SERVER__ACCESS_LOG": "maybe"}, "expected true or false"),
        ({}, {"LITM_SERVE__PORT": "1"}, "expected LITM_SERVE__SECTION__OPTION"),
        ({}, {"LITM_SERVE__SRVER__PORT": "1"}, "unknown section"),
        ({}, {"LITM_SERVE__": "1"}, "expected LITM_SERVE__SECTION__OPTION"),
        ({"upstreams": {"x": {"kind": "bedrock", "base_url": "http://h"}}}, {}, "kind: expected one of"),
        ({"upstreams": {"x": {"base_url": "file:///etc/passwd"}}}, {}, "expected an http"),
        ({"models": {"m": {"upstream": "nowhere"}}}, {}, "is not a configured upstream"),
        ({"upstreams": UPSTREAM, "models": {"m": {"upstream": "oai", "max_input_tokens": -1}}}, {}, ">= 0"),
        ({"upstreams": UPSTREAM, "models": {"m": {"upstream": "oai", "price": "cheap"}}}, {}, "expected a table"),
    ],
)
def test_bad_configuration_is_a_typed_one_line_error(raw: dict[str, object], env: dict[str, str], match: str) -> None:
    with pytest.raises(GatewayConfigError, match=match) as err:
        config_from_mapping(raw, env=env)
    assert isinstance(err.value, ValueError) and "\n" not in str(err.value)


def test_unreadable_or_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(GatewayConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml", env={})
    (tmp_path / "bad.toml").write_text("[server\n", encoding="utf-8")
    with pytest.raises(GatewayConfigError, match="not valid TOML"):
        load_config(tmp_path / "bad.toml", env={})


def _cfg(tmp_path: Path, models: dict[str, object], env: dict[str, str] | None = None) -> object:
    raw = {"ledger": {"url": str(tmp_path / "s.db")}, "keys": {"store": str(tmp_path / "k.db")},
           "upstreams": {**UPSTREAM, "local": {"kind": "openai-compatible", "base_url": "http://127.0.0.1:9/v1"}},
           "models": models}  # fmt: skip
    return config_from_mapping(raw, env=env or {})


def test_start_up_refuses_an_unpriced_model_a_missing_secret_and_a_bad_tokenizer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("T_KEY", "sk-test")
    with pytest.raises(GatewayConfigError, match=r"models\.my-llama: no price"):
        build_runtime(_cfg(tmp_path, {"my-llama": {"upstream": "local"}}))  # type: ignore[arg-type]
    with pytest.raises(GatewayConfigError, match="cannot load tokenizer"):
        build_runtime(_cfg(tmp_path, {"m": {"upstream": "local", "tokenizer": "nonsense:x",  # type: ignore[arg-type]
                                            "price": {"input": "1", "output": "1"}}}))  # fmt: skip
    monkeypatch.delenv("T_KEY")
    with pytest.raises(GatewayConfigError, match="T_KEY is not set"):
        build_runtime(_cfg(tmp_path, {"gpt-4o-mini": {"upstream": "oai"}}))  # type: ignore[arg-type]
    monkeypatch.setenv("T_KEY", "sk-test")
    priced = {"upstream": "local", "price": {"input": "0.1", "output": "0.2"}}
    rt = build_runtime(_cfg(tmp_path, {"gpt-4o-mini": {"upstream": "oai"}, "my-llama": priced}))  # type: ignore[arg-type]
    try:
        assert rt.tokenizers["gpt-4o-mini"].exact and not rt.tokenizers["my-llama"].exact
        assert "sk-test" not in repr(rt)
    finally:
        rt.close()


def test_sqlite_durability_is_configurable_and_checked(tmp_path: Path) -> None:
    raw = {"ledger": {"url": str(tmp_path / "s.db"), "synchronous": "NORMAL"}, "keys": {"store": str(tmp_path / "k")}}
    rt = build_runtime(config_from_mapping(raw, env={}))
    try:
        conn = rt.cap.ledger._conn()  # type: ignore[attr-defined]
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    finally:
        rt.close()
    with pytest.raises(GatewayConfigError, match="synchronous must be one of"):
        build_runtime(config_from_mapping({**raw, "ledger": {"url": str(tmp_path / "s.db"), "synchronous": "OFF"}},
                                          env={}))  # fmt: skip


def test_litm_serve_refuses_a_bad_file_in_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "g.toml").write_text("[server]\nprot = 1\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "litm", "serve", "--config", str(tmp_path / "g.toml")],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "litm: error: unknown option server.prot (expected one of: access_log, admin_key_env, "
        "graceful_timeout_s, host, http, keep_alive_s, log_level, loop, max_body_bytes, port, workers)"
    ]
    assert issubclass(GatewayConfigError, LitmError)


def test_max_input_tokens_from_a_probe_profile(tmp_path: Path) -> None:
    import httpx

    from litm.placement._profile import PositionProfile
    from litm.serve import create_app, create_key
    from serve_support import StandIn, ThreadedServer

    PositionProfile.from_weights([1, 0.7, 1], metadata={"recommended_max_input_tokens": 100}).save(tmp_path / "p.json")
    PositionProfile.from_weights([1, 0.7, 1]).save(tmp_path / "hand.json")
    local = {"kind": "openai-compatible", "base_url": "http://127.0.0.1:9/v1"}
    price = {"input": "1", "output": "1"}

    def cfg(model: dict[str, object], upstream: dict[str, object] = local) -> GatewayConfig:
        route = {"upstream": "local", "price": price, **model}
        return config_from_mapping({"ledger": {"url": str(tmp_path / "s.db")}, "keys": {"store": str(tmp_path / "k")},
                                    "upstreams": {"local": upstream}, "models": {"m": route}}, env={})  # fmt: skip

    for model, expected in (({"profile": "p.json"}, 100), ({"profile": "p.json", "max_input_tokens": 40}, 40),
                            ({"max_input_tokens": 40}, 40), ({}, 0)):  # fmt: skip
        rt = build_runtime(cfg({**model, "profile": str(tmp_path / model["profile"])} if "profile" in model else model))
        assert rt.max_input["m"] == expected, model
        rt.close()
    with pytest.raises(GatewayConfigError, match="has no measured length"):
        build_runtime(cfg({"profile": str(tmp_path / "hand.json")}))
    with pytest.raises(GatewayConfigError, match=r"models\.m\.profile"):
        build_runtime(cfg({"profile": str(tmp_path / "missing.json")}))
    double = StandIn()
    with ThreadedServer(double.app()) as up:
        config = cfg({"profile": str(tmp_path / "p.json")}, {**local, "base_url": up.url + "/v1"})
        plain, _ = create_key(config, name="t", limit="1")
        with ThreadedServer(create_app(config)) as gw:

            def ask(words: int) -> httpx.Response:
                body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "word " * words}]}
                return httpx.post(
                    gw.url + "/v1/chat/completions", json=body, headers={"authorization": f"Bearer {plain}"}
                )

            too_long = ask(80)
            assert too_long.status_code == 400 and too_long.json()["error"]["max_input_tokens"] == 100
            assert ask(5).status_code == 200
    assert double.count() == 1
