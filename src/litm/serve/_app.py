"""The ASGI app (Starlette): routes, forwarding through one pooled upstream client, settling, headers.

Routes: ``POST /v1/chat/completions``, ``POST /v1/responses``, ``GET /v1/models`` (OpenAI);
``POST /v1/messages``, ``POST /v1/messages/count_tokens`` (Anthropic; ``GET /v1/models`` answers in
Anthropic's shape when the request carries ``anthropic-version``); ``GET /healthz`` (the process runs),
``GET /readyz`` (the ledger answers), ``GET /metrics`` (Prometheus) and ``/admin/...`` (keys and limits,
:mod:`litm.serve._adminapi`), the last two behind the admin key. Everything but the two health routes needs
a key.

After :func:`~litm.serve._admit.admit` let a request through, it is sent to the configured upstream only,
with only the allow-listed headers and the upstream's own secret. The hold is then booked by
:mod:`litm.spend._outcome`'s rule (through the spend step): settled from the answer's usage; refunded when
the upstream refused the request (4xx, 503, 529) or could not be reached; charged in full when it may have
run (5xx, a timeout waiting, an unreadable answer). Responses carry ``x-request-id`` and the
``x-litm-*`` headers: the hold, the cost and what is left on the tightest scope.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator, Mapping

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from litm._version import __version__
from litm.budget._guard.metering import StreamUsage
from litm.errors import LedgerBusyError, LedgerUnavailableError, LitmError
from litm.serve._adminapi import admin_routes
from litm.serve._admit import Admitted, HoldInDoubt, admit, authenticate
from litm.serve._config import CONFIG_ENV, GatewayConfig, Upstream, load_config
from litm.serve._keys import VirtualKey
from litm.serve._log import access, setup_logging
from litm.serve._metrics import Metrics
from litm.serve._recover import Releases, release_when_answering
from litm.serve._runtime import Runtime, build_runtime
from litm.serve._shapes import API_FAMILY, Family, Refusal, error_body, models_body, read_body
from litm.serve._stream import relay
from litm.serve._upstream import UpstreamClient, UpstreamError, UpstreamResponse
from litm.spend._ledger import CounterStatus

__all__ = ["CONFIG_ENV", "create_app", "create_app_from_env"]

log = logging.getLogger("litm.serve")

#: Client headers that may go upstream; everything else (cookies, the client's keys, SDK telemetry) stays.
FORWARDED_HEADERS = ("anthropic-version", "anthropic-beta", "openai-beta")
#: The upstream path of each request shape, appended to the upstream's ``base_url``.
UPSTREAM_PATHS = {"openai-chat": "/chat/completions", "openai-responses": "/responses", "anthropic": "/v1/messages"}


class UpstreamStatus(Exception):
    """The upstream answered an error status (read by :func:`litm.spend._outcome.status_of`)."""

    def __init__(self, status_code: int) -> None:
        super().__init__(f"upstream answered HTTP {status_code}")
        self.status_code = status_code


def _rt(request: Request) -> Runtime:
    rt: Runtime = request.app.state.runtime
    return rt


def _client(request: Request) -> UpstreamClient:
    client: UpstreamClient = request.app.state.client
    return client


def _metrics(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


def _refused(family: Family, refusal: Refusal, request_id: str, request: Request, started: float,
             key: VirtualKey | None = None, model: str | None = None) -> JSONResponse:  # fmt: skip
    _metrics(request).refused(request.url.path, refusal.status, refusal.code)
    access(request_id=request_id, method=request.method, path=request.url.path, status=refusal.status,
           refusal=refusal.code, key_id=key.id if key else None, model=model,
           ms=round((time.perf_counter() - started) * 1000, 3))  # fmt: skip
    return JSONResponse(error_body(family, refusal), status_code=refusal.status, headers={"x-request-id": request_id})


def _upstream_headers(request: Request, upstream: Upstream, secret: str, request_id: str,
                      stream: bool) -> dict[str, str]:  # fmt: skip
    headers = {name: request.headers[name] for name in FORWARDED_HEADERS if name in request.headers}
    headers["content-type"] = "application/json"
    headers["accept"] = "text/event-stream" if stream else "application/json"
    headers["user-agent"] = f"litm-gateway/{__version__}"
    headers["x-request-id"] = request_id
    if upstream.kind == "anthropic":
        headers.setdefault("anthropic-version", "2023-06-01")
        if secret:
            headers["x-api-key"] = secret
    elif secret:
        headers["authorization"] = f"Bearer {secret}"
    return headers


def _settle(rt: Runtime, adm: Admitted, answer: object) -> tuple[float, tuple[str, int] | None]:
    """Settle from ``answer``'s usage (the spend step's rules), then read the scope with the least left over the
    key's chain: on the event loop (``Runtime.inline_ledger``) or in one worker thread. Returns the settle's
    seconds and ``(scope, micro-dollars left)``, None when the ledger does not say."""
    started = time.perf_counter()
    adm.step.after(adm.call, answer)
    settle_s = time.perf_counter() - started
    try:  # SQLite: its settlement carries no counters (Settlement.status), so they are read here
        rows = rt.cap.ledger.status(list(adm.key.chain))
    except LitmError:  # only a header: the answer goes out without it
        return settle_s, None
    return settle_s, _tightest(rows)


async def _asettle(rt: Runtime, adm: Admitted, answer: object) -> tuple[float, tuple[str, int] | None]:
    """:func:`_settle` through the ledger's async client (Redis): no worker thread."""
    started = time.perf_counter()
    await adm.step.aafter(adm.call, answer)
    settle_s = time.perf_counter() - started
    if read := _read_with_settlement(adm):
        return settle_s, _tightest(read)
    try:
        rows = await rt.cap.astatus(list(adm.key.chain))
    except LitmError:
        return settle_s, None
    return settle_s, _tightest(rows)


def _read_with_settlement(adm: Admitted) -> list[CounterStatus]:
    """The chain's counters the settlement itself returned (the Redis ledger reads them in its settle script,
    saving a round trip), or [] when the ledger did not."""
    settlement = adm.reservation.settlement
    return list(settlement.status) if settlement is not None else []


def _tightest(rows: list[CounterStatus]) -> tuple[str, int] | None:
    if not rows:
        return None
    tight = min(rows, key=lambda c: c.available)
    return tight.scope, tight.available


def _spend_headers(adm: Admitted, left: tuple[str, int] | None) -> dict[str, str]:
    r = adm.reservation
    headers = {"x-request-id": adm.request_id, "x-litm-held-micros": str(r.amount),
               "x-litm-input-tokens": str(adm.count.upper)}  # fmt: skip
    if adm.compacted:
        headers["x-litm-compacted"] = "true"
    if r.settlement is not None:
        headers["x-litm-cost-micros"] = str(r.settlement.cost)
        headers["x-litm-outcome"] = r.settlement.state
    if left is not None:
        headers["x-litm-remaining-micros"] = str(left[1])
        headers["x-litm-remaining-scope"] = left[0]
    return headers


async def _upstream_failed(adm: Admitted, exc: UpstreamError) -> Refusal:
    """Book the hold of a request that got no answer (refunded only when it never left), and the refusal."""
    if not exc.reached:
        adm.call.attempts.sent = 0
    await adm.step.afailed(adm.call, exc)
    if exc.timed_out:
        return Refusal(504, "upstream_timeout", str(exc))
    return Refusal(502, "upstream_unreachable" if not exc.reached else "upstream_failed", str(exc))


async def _forward(request: Request, adm: Admitted) -> Response:
    rt, client = _rt(request), _client(request)
    upstream = adm.upstream
    headers = _upstream_headers(request, upstream, rt.secrets[upstream.name], adm.request_id, adm.stream)
    adm.call.attempts.sent = 1
    metrics = _metrics(request)
    metrics.admitted(adm.route.name, adm.count.upper, adm.reservation.amount, adm.reserve_s)
    sent = time.perf_counter()
    try:
        resp = await client.post(upstream, UPSTREAM_PATHS[adm.api], json.dumps(adm.body).encode(), headers)
        metrics.observe_upstream(upstream.name, time.perf_counter() - sent)
    except UpstreamError as exc:
        raise await _upstream_failed(adm, exc) from None
    if resp.status >= 300:
        try:
            content = await resp.read()
        except UpstreamError as exc:
            raise await _upstream_failed(adm, exc) from None
        await adm.step.afailed(adm.call, UpstreamStatus(resp.status))
        _log_call(request, adm, resp.status, "upstream_error")
        return _upstream_error(rt, upstream, API_FAMILY[adm.api], resp, content, _spend_headers(adm, None))
    if adm.stream and resp.headers.get("content-type", "").startswith("text/event-stream"):
        return _streamed(request, adm, resp)
    try:
        content = await resp.read()
    except UpstreamError as exc:
        raise await _upstream_failed(adm, exc) from None
    try:
        parsed = json.loads(content)
    except ValueError as exc:
        await adm.step.afailed(adm.call, exc)
        raise Refusal(502, "upstream_unreadable", f"upstream {upstream.name!r} sent an unreadable answer") from None
    if rt.inline_ledger:
        try:
            with rt.on_loop():
                settle_s, left = _settle(rt, adm, parsed)
        except LedgerBusyError:  # another process holds the write lock: the hold is still open, settle in a thread
            settle_s, left = await asyncio.to_thread(_settle, rt, adm, parsed)
    elif rt.async_ledger:
        settle_s, left = await _asettle(rt, adm, parsed)
    else:
        settle_s, left = await asyncio.to_thread(_settle, rt, adm, parsed)
    settlement = adm.reservation.settlement
    metrics.booked(adm.route.name, settlement.cost if settlement else 0, settle_s)
    _log_call(request, adm, resp.status, "ok")
    return Response(content, status_code=resp.status, media_type="application/json",
                    headers=_spend_headers(adm, left))  # fmt: skip


def _upstream_error(rt: Runtime, upstream: Upstream, family: Family, resp: UpstreamResponse, content: bytes,
                    headers: dict[str, str]) -> Response:  # fmt: skip
    """The client's answer to an upstream error status: never the provider's secret, nor a redirect."""
    if resp.status in (401, 403) or resp.status < 400:
        # The provider refused the gateway's own credentials (its message may quote part of the secret),
        # or redirected: neither is the client's to see or follow.
        code = "upstream_redirect" if resp.status < 400 else "upstream_refused_credentials"
        why = f"upstream {upstream.name!r} answered HTTP {resp.status}; the operator must check its config"
        return JSONResponse(error_body(family, Refusal(502, code, why)), status_code=502, headers=headers)
    secret = rt.secrets[upstream.name]
    if secret:  # a provider that echoes the credential it was sent must not hand it to the client
        content = content.replace(secret.encode(), b"[redacted]")
    return Response(content, status_code=resp.status,
                    media_type=resp.headers.get("content-type", "application/json"), headers=headers)  # fmt: skip


def _streamed(request: Request, adm: Admitted, resp: UpstreamResponse) -> StreamingResponse:
    r = adm.reservation
    metrics = _metrics(request)

    async def settle(usage: object) -> None:
        settling = time.perf_counter()
        try:
            await r.asettle(usage)
            metrics.booked(adm.route.name, r.settlement.cost if r.settlement else 0, time.perf_counter() - settling)
        except LitmError as exc:  # no readable usage, or a ledger that cannot write it: the lease charges it
            with contextlib.suppress(LitmError):
                await r.acharge_in_full(f"stream usage could not be settled ({type(exc).__name__})")

    async def charge(why: str) -> None:
        with contextlib.suppress(LedgerUnavailableError):
            await r.acharge_in_full(why)
            metrics.booked(adm.route.name, r.amount, 0.0)

    def done(outcome: str) -> None:
        _log_call(request, adm, resp.status, f"stream_{outcome}")

    body: AsyncIterator[bytes] = relay(resp, StreamUsage(adm.api, pass_usage_chunk=adm.pass_usage_chunk),
                                       settle, charge, done)  # fmt: skip
    return StreamingResponse(body, status_code=resp.status, media_type="text/event-stream",
                             headers=_spend_headers(adm, None))  # fmt: skip


def _log_call(request: Request, adm: Admitted, status: int, outcome: str) -> None:
    r = adm.reservation
    _metrics(request).answered(request.url.path, status)
    access(request_id=adm.request_id, method=request.method, path=request.url.path, status=status, outcome=outcome,
           key_id=adm.key.id, model=adm.route.name, upstream=adm.upstream.name, stream=adm.stream,
           input_tokens=adm.count.upper, held_micros=r.amount,
           cost_micros=r.settlement.cost if r.settlement else None,
           ms=round((time.perf_counter() - request.state.started) * 1000, 3))  # fmt: skip


async def _gateway(request: Request, api: str) -> Response:
    request.state.started = started = time.perf_counter()
    request_id = uuid.uuid4().hex
    family = API_FAMILY[api]
    rt = _rt(request)
    key: VirtualKey | None = None
    adm: Admitted | None = None
    try:
        key = await authenticate(rt, request.headers)
        raw = await read_body(request, rt.config.server.max_body_bytes)
        adm = await admit(rt, api, key, raw, request_id)
        return await _forward(request, adm)
    except Refusal as refusal:
        if isinstance(refusal, HoldInDoubt):
            _release_later(request, refusal.key)
        model = adm.route.name if adm else None
        return _refused(family, refusal, request_id, request, started, key, model)


def _release_later(request: Request, key: str) -> None:
    """Release hold ``key`` of a refused request once the ledger answers, beside the requests that follow."""
    rt = _rt(request)
    options = rt.config.ledger
    pending: Releases = request.app.state.releasing
    task = asyncio.create_task(release_when_answering(rt.cap, key, first_wait_s=options.socket_timeout_s,
                                                      give_up_s=max(60.0, options.lease_s)))  # fmt: skip
    pending[task] = key
    task.add_done_callback(lambda done: pending.pop(done, None))


async def chat_completions(request: Request) -> Response:
    return await _gateway(request, "openai-chat")


async def responses(request: Request) -> Response:
    return await _gateway(request, "openai-responses")


async def messages(request: Request) -> Response:
    return await _gateway(request, "anthropic")


async def count_tokens(request: Request) -> Response:
    """Anthropic's token counting: free upstream, so it is forwarded without a hold (key and model checked)."""
    started, request_id, rt = time.perf_counter(), uuid.uuid4().hex, _rt(request)
    key = None
    try:
        key = await authenticate(rt, request.headers)
        raw = await read_body(request, rt.config.server.max_body_bytes)
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            raise Refusal(400, "invalid_json", "the request body is not valid JSON") from None
        model = body.get("model") if isinstance(body, dict) else None
        route = rt.config.route(model) if isinstance(model, str) else None
        if route is None or not key.may_call(route.name):
            raise Refusal(404, "model_not_found", f"model {model!r} is not served to this key")
        upstream = rt.config.upstreams[route.upstream]
        if upstream.kind != "anthropic":
            raise Refusal(400, "wrong_endpoint", f"model {model!r} is not served by an Anthropic upstream")
        try:
            resp = await _client(request).post(upstream, "/v1/messages/count_tokens",
                                               json.dumps({**body, "model": route.sent_name}).encode(),
                                               _upstream_headers(request, upstream, rt.secrets[upstream.name],
                                                                 request_id, False))  # fmt: skip
            content = await resp.read()
        except UpstreamError as exc:
            raise Refusal(504 if exc.timed_out else 502, "upstream_unreachable", str(exc)) from None
        access(request_id=request_id, method="POST", path=request.url.path, status=resp.status,
               key_id=key.id, model=route.name, ms=round((time.perf_counter() - started) * 1000, 3))  # fmt: skip
        if resp.status >= 300:
            return _upstream_error(rt, upstream, "anthropic", resp, content, {"x-request-id": request_id})
        return Response(content, status_code=resp.status, media_type="application/json",
                        headers={"x-request-id": request_id})  # fmt: skip
    except Refusal as refusal:
        return _refused("anthropic", refusal, request_id, request, started, key)


async def list_models(request: Request) -> Response:
    started, request_id, rt = time.perf_counter(), uuid.uuid4().hex, _rt(request)
    family: Family = "anthropic" if "anthropic-version" in request.headers else "openai"
    try:
        key = await authenticate(rt, request.headers)
    except Refusal as refusal:
        return _refused(family, refusal, request_id, request, started)
    names = [name for name in rt.config.models if key.may_call(name)]
    return JSONResponse(models_body(family, names), headers={"x-request-id": request_id})


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    """Ready only when the ledger answers (a gateway that cannot reserve refuses every call)."""
    try:
        await asyncio.to_thread(_rt(request).cap.ledger.limits)
    except LitmError as exc:
        return JSONResponse({"status": "unavailable", "reason": type(exc).__name__}, status_code=503)
    return JSONResponse({"status": "ready"})


def create_app(config: GatewayConfig, *, runtime: Runtime | None = None) -> Starlette:
    """The gateway as an ASGI app for ``config`` (built and checked when the app starts, in each worker)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        setup_logging(config.server.log_level)
        rt = runtime or build_runtime(config)
        app.state.runtime = rt
        app.state.metrics = Metrics()
        # Holds of refused requests that the ledger may have booked without answering: released in the background.
        app.state.releasing = {}
        # One pool per worker for every upstream: connections are kept alive between requests.
        app.state.client = UpstreamClient(config.upstreams.values())
        try:
            yield
        finally:
            await app.state.client.aclose()
            await _finish_releases(rt, app.state.releasing)
            await rt.keys.aclose()
            await rt.cap.aclose()
            if runtime is None:
                rt.close()

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
        Route("/v1/models", list_models, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        *admin_routes(),
    ]
    handlers = {404: _no_route, 405: _no_route, ClientDisconnect: _client_gone, Exception: _internal}
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)


async def _finish_releases(rt: Runtime, pending: Releases) -> None:
    """At shutdown, one last try for each hold still waiting to be released (instead of its next pause); a hold
    the ledger still does not answer for is charged by its lease, and the log names it."""
    keys = list(pending.values())
    for task in list(pending):
        task.cancel()
    for key in keys:
        try:
            await asyncio.wait_for(asyncio.to_thread(rt.cap.release, key), 2 * rt.config.ledger.socket_timeout_s + 1)
        except (LitmError, TimeoutError) as exc:
            log.error("hold %s of a request refused because the ledger did not answer could not be released at "
                      "shutdown (%s); its lease charges it in full unless it is released by hand (litm spend "
                      "release)", key, type(exc).__name__)  # fmt: skip


async def _internal(request: Request, exc: Exception) -> Response:
    """A defect of the gateway's own: a 500 in the provider's shape, logged as one line (type and message, no
    request content). A hold it leaves open is charged in full when its lease expires (fail closed)."""
    log.error("request to %s failed: %s: %s", request.url.path, type(exc).__name__, exc)
    family: Family = "anthropic" if request.url.path.startswith("/v1/messages") else "openai"
    refusal = Refusal(500, "internal_error", "the gateway failed on this request; see its log")
    return JSONResponse(error_body(family, refusal), status_code=500)


async def _client_gone(request: Request, exc: Exception) -> Response:
    """The client closed its connection before its request was read: nothing was reserved or sent upstream,
    so it is an info line, not a defect (no 500, no traceback). 499 is nginx's code for it; nobody reads it."""
    log.info("client closed the connection before its request to %s was read", request.url.path)
    return Response(status_code=499)


async def _no_route(request: Request, exc: Exception) -> Response:
    """An unknown path or method, answered in the provider's shape like every other refusal."""
    status = int(getattr(exc, "status_code", 404))
    family: Family = "anthropic" if request.url.path.startswith("/v1/messages") else "openai"
    what = "no such route" if status == 404 else f"{request.method} is not allowed here"
    refusal = Refusal(status, "unknown_route" if status == 404 else "method_not_allowed", f"{what}: {request.url.path}")
    return JSONResponse(error_body(family, refusal), status_code=status)


def create_app_from_env(env: Mapping[str, str] | None = None) -> Starlette:
    """The app of the file named by ``LITM_SERVE_CONFIG`` (and ``LITM_SERVE__*``): uvicorn's factory for
    each worker process."""
    environ = os.environ if env is None else env
    return create_app(load_config(environ.get(CONFIG_ENV) or None, env=environ))
