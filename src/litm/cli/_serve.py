"""``litm serve`` (the gateway) and ``litm keys create|list|revoke|rotate`` (its virtual keys).

Both read the gateway's TOML file (``--config``, or ``LITM_SERVE_CONFIG``); every option of the file is also
a ``LITM_SERVE__SECTION__OPTION`` variable. A created or rotated key is printed once and never again: only
its hash is stored.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

import typer

from litm.cli import app
from litm.serve import GatewayConfig, create_key, list_keys, load_config, revoke_key, rotate_key, serve

keys_app = typer.Typer(help="Create, list, revoke and rotate the gateway's virtual keys.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")

_CONFIG = typer.Option(None, "--config", "-c", help="Gateway TOML file (default: $LITM_SERVE_CONFIG).")


def _config(path: str | None) -> GatewayConfig:
    return load_config(path or os.environ.get("LITM_SERVE_CONFIG") or None)


@app.command("serve")
def serve_cmd(
    config: str | None = _CONFIG,
    host: str | None = typer.Option(None, "--host", help="Listen address (overrides server.host)."),
    port: int | None = typer.Option(None, "--port", min=1, max=65535, help="Port (overrides server.port)."),
    workers: int | None = typer.Option(None, "--workers", min=1, help="Worker processes (overrides server.workers)."),
) -> None:
    """Run the OpenAI- and Anthropic-compatible gateway (token gate and spend cap before every call).

    Example: litm serve --config gateway.toml --workers 2
    """
    serve(config or os.environ.get("LITM_SERVE_CONFIG") or None, host=host, port=port, workers=workers)


def _when(ts: float | None) -> str:
    return "" if ts is None else datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


@keys_app.command("create")
def create_cmd(
    name: str = typer.Option(..., "--name", help="Who or what the key is for."),
    limit: str = typer.Option(..., "--limit", help="Dollars the key's own scope may spend per window, e.g. 5."),
    window: str = typer.Option("total", "--window", help="total, daily or monthly."),
    scope: list[str] = typer.Option(None, "--scope", "-s", help="Outer scopes, outermost first (repeatable)."),
    model: list[str] = typer.Option(None, "--model", "-m", help="Models it may call (repeatable; default: all)."),
    default_max_tokens: int | None = typer.Option(
        None, "--default-max-tokens", min=1, help="Output limit for requests that set none (default: refuse them)."
    ),
    compact: bool = typer.Option(
        False, "--compact", help="Compact a conversation over the model's input limit instead of refusing it."
    ),
    config: str | None = _CONFIG,
    as_json: bool = typer.Option(False, "--json", help="JSON output."),
) -> None:
    """Create a key; it is printed once and cannot be shown again.

    Example: litm keys create --config gateway.toml --name alice --scope team:a --limit 5 --window daily
    """
    plain, key = create_key(
        _config(config), name=name, limit=limit, window=window,  # type: ignore[arg-type]
        scopes=scope or (), models=model or ("*",), default_max_tokens=default_max_tokens, compact=compact,
    )  # fmt: skip
    if as_json:
        typer.echo(json.dumps({"key": plain, "id": key.id, "chain": list(key.chain), "models": list(key.models)}))
        return
    typer.echo(plain)
    typer.echo(f"id {key.id}, chain {' > '.join(key.chain)}, models {', '.join(key.models)} "
               "(store it now: it is not shown again)", err=True)  # fmt: skip


@keys_app.command("list")
def list_cmd(config: str | None = _CONFIG, as_json: bool = typer.Option(False, "--json", help="JSON output.")) -> None:
    """List the keys (ids and scopes, never secrets).

    Example: litm keys list --config gateway.toml
    """
    keys = list_keys(_config(config))
    if as_json:
        typer.echo(json.dumps([{"id": k.id, "name": k.name, "chain": list(k.chain), "models": list(k.models),
                                "default_max_tokens": k.default_max_tokens, "compact": k.compact, "created": k.created,
                                "revoked": k.revoked} for k in keys], indent=2))  # fmt: skip
        return
    for k in keys:
        state = f"revoked {_when(k.revoked)}" if k.revoked else "active"
        typer.echo(f"{k.id}  {k.name}  {' > '.join(k.chain)}  models={','.join(k.models)}  {state}")


@keys_app.command("revoke")
def revoke_cmd(key_id: str = typer.Argument(..., help="The key's id (from keys list)."),
               config: str | None = _CONFIG) -> None:  # fmt: skip
    """Revoke a key: its next request gets 401.

    Example: litm keys revoke 3f2a9c1d0b7e --config gateway.toml
    """
    key = revoke_key(_config(config), key_id)
    typer.echo(f"revoked {key.id} ({key.name}) at {_when(key.revoked)}")


@keys_app.command("rotate")
def rotate_cmd(key_id: str = typer.Argument(..., help="The key's id (from keys list)."),
               config: str | None = _CONFIG) -> None:  # fmt: skip
    """Give a key a new secret (same id, scopes and budget); the old one stops working at once.

    Example: litm keys rotate 3f2a9c1d0b7e --config gateway.toml
    """
    plain, key = rotate_key(_config(config), key_id)
    typer.echo(plain)
    typer.echo(f"rotated {key.id} ({key.name}); store it now: it is not shown again", err=True)
