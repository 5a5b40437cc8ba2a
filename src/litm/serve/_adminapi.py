"""The admin HTTP API and ``/metrics``, behind the admin key (``server.admin_key_env``), never a virtual key.

``GET /admin/keys`` lists the keys (never a secret); ``POST /admin/keys`` creates one (JSON: ``name``,
``limit`` in dollars as a string, and optionally ``window``, ``scopes``, ``models``, ``default_max_tokens``)
and answers 201 with the plain key, shown this once; ``POST /admin/keys/{id}/revoke`` and
``POST /admin/keys/{id}/rotate``; ``PUT /admin/limits`` sets a scope's limit (``scope``, ``window``,
``limit``); ``GET /admin/status?scope=...`` reads the ledger's counters. Each is one call of the same
functions as ``litm keys`` and ``litm spend``. Bad input is a 400 naming the problem, an unknown key 404.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from litm.errors import LitmError, SpendRequestError, VirtualKeyError
from litm.serve._admin import create_key, list_keys, revoke_key, rotate_key
from litm.serve._keys import VirtualKey
from litm.serve._metrics import content_type
from litm.serve._runtime import Runtime
from litm.serve._shapes import Refusal, error_body, read_body
from litm.spend import parse_usd
from litm.spend._scopes import check_scope, check_window

__all__ = ["admin_routes"]


def _key(k: VirtualKey) -> dict[str, object]:
    return {"id": k.id, "name": k.name, "chain": list(k.chain), "models": list(k.models),
            "default_max_tokens": k.default_max_tokens, "compact": k.compact, "created": k.created,
            "revoked": k.revoked}  # fmt: skip


def _fail(refusal: Refusal) -> JSONResponse:
    return JSONResponse(error_body("openai", refusal), status_code=refusal.status)


def _admin(handler: Callable[[Request, Runtime], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Check the admin key, then run ``handler``; litm's typed errors become 400 (404 for an unknown key)."""

    async def endpoint(request: Request) -> Response:
        rt: Runtime = request.app.state.runtime
        if not rt.admin_key:
            return _fail(Refusal(404, "admin_disabled", "set server.admin_key_env to enable the admin API"))
        auth = request.headers.get("authorization", "")
        if not hmac.compare_digest(auth.encode(), f"Bearer {rt.admin_key}".encode()):
            return _fail(Refusal(401, "invalid_admin_key", "the admin API needs the admin key"))
        try:
            return await handler(request, rt)
        except Refusal as refusal:
            return _fail(refusal)
        except VirtualKeyError as exc:
            return _fail(Refusal(404, "key_not_found", str(exc)))
        except LitmError as exc:
            return _fail(Refusal(400, "invalid_request", str(exc)))

    return endpoint


async def _json(request: Request) -> dict[str, Any]:
    # A request body: arbitrary JSON, passed on to create_key / set_limit, which check each field's type.
    rt: Runtime = request.app.state.runtime
    raw = await read_body(request, rt.config.server.max_body_bytes)  # the admin API has the same size limit
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise Refusal(400, "invalid_json", "the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise Refusal(400, "invalid_json", "the request body must be a JSON object")
    return body


def _fields(body: dict[str, object], required: tuple[str, ...], optional: tuple[str, ...]) -> None:
    missing = [f for f in required if f not in body]
    unknown = sorted(set(body) - set(required) - set(optional))
    if missing or unknown:
        raise SpendRequestError(f"missing field(s) {missing} / unknown field(s) {unknown}; expected "
                                f"{', '.join(required)} and optionally {', '.join(optional)}")  # fmt: skip


async def keys_list(request: Request, rt: Runtime) -> Response:
    keys = await asyncio.to_thread(list_keys, rt.config)
    return JSONResponse([_key(k) for k in keys])


async def keys_create(request: Request, rt: Runtime) -> Response:
    body = await _json(request)
    _fields(body, ("name", "limit"), ("window", "scopes", "models", "default_max_tokens", "compact"))
    if not isinstance(body["limit"], str):
        raise SpendRequestError(f'limit must be dollars as a string ("5", "0.50"), got {body["limit"]!r}')
    plain, key = await asyncio.to_thread(
        create_key, rt.config, name=body["name"], limit=body["limit"], window=body.get("window", "total"),
        scopes=body.get("scopes", ()), models=body.get("models", ("*",)),
        default_max_tokens=body.get("default_max_tokens"), compact=body.get("compact", False),
    )  # fmt: skip
    return JSONResponse({"key": plain, **_key(key)}, status_code=201)


async def key_revoke(request: Request, rt: Runtime) -> Response:
    key = await asyncio.to_thread(revoke_key, rt.config, request.path_params["key_id"])
    return JSONResponse(_key(key))


async def key_rotate(request: Request, rt: Runtime) -> Response:
    plain, key = await asyncio.to_thread(rotate_key, rt.config, request.path_params["key_id"])
    return JSONResponse({"key": plain, **_key(key)})


async def limits_set(request: Request, rt: Runtime) -> Response:
    body = await _json(request)
    _fields(body, ("scope", "limit"), ("window",))
    scope, window = check_scope(body["scope"]), check_window(body.get("window", "total"))
    if not isinstance(body["limit"], str):
        raise SpendRequestError(f"limit must be dollars as a string, got {body['limit']!r}")
    micros = parse_usd(body["limit"], what="limit")
    await asyncio.to_thread(rt.cap.ledger.set_limit, scope, window, micros)
    return JSONResponse({"scope": scope, "window": window, "limit_micros": micros})


async def metrics(request: Request, rt: Runtime) -> Response:
    """Prometheus metrics (admin only: they show every key's spend)."""
    return Response(request.app.state.metrics.render(), media_type=content_type())


async def status(request: Request, rt: Runtime) -> Response:
    scopes = [check_scope(s) for s in request.query_params.getlist("scope")] or None
    rows = await asyncio.to_thread(rt.cap.ledger.status, scopes)
    return JSONResponse([{"scope": c.scope, "window": c.window, "window_id": c.wid, "limit_micros": c.limit,
                          "settled_micros": c.settled, "held_micros": c.held, "available_micros": c.available}
                         for c in rows])  # fmt: skip


def admin_routes() -> list[Route]:
    """The admin API's routes, to mount on the gateway's app."""
    return [
        Route("/metrics", _admin(metrics), methods=["GET"]),
        Route("/admin/keys", _admin(keys_list), methods=["GET"]),
        Route("/admin/keys", _admin(keys_create), methods=["POST"]),
        Route("/admin/keys/{key_id}/revoke", _admin(key_revoke), methods=["POST"]),
        Route("/admin/keys/{key_id}/rotate", _admin(key_rotate), methods=["POST"]),
        Route("/admin/limits", _admin(limits_set), methods=["PUT"]),
        Route("/admin/status", _admin(status), methods=["GET"]),
    ]
