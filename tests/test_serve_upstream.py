"""The gateway's upstream client (``litm.serve._upstream``) through a real gateway on loopback: how each way of
failing is answered and booked, what never rides from one request to the next, streams passed through
byte for byte, and the ledger worked inline or in a thread (``Runtime.inline_ledger``) with the same books.

Upstreams here are small servers of the test's own: a Starlette app under uvicorn, or a raw socket that
hangs up at a chosen point (what no well-behaved server does on purpose).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from fixtures_server import free_port
from litm.serve import config_from_mapping, create_app, create_key
from litm.serve._runtime import build_runtime
from litm.spend import open_ledger
from serve_support import ThreadedServer

PRICE = {"input": "0", "output": "1000"}  # $ per million output tokens: a hold of max_tokens x 1000 micros
BODY = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hello"}]}
USAGE = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}


def _config(tmp: Path, base_url: str, *, synchronous: str = "NORMAL", timeout_s: float = 600.0) -> dict[str, object]:
    return {
        "ledger": {"url": str(tmp / "spend.db"), "synchronous": synchronous},
        "keys": {"store": str(tmp / "keys.db")},
        "upstreams": {
            "up": {"kind": "openai-compatible", "base_url": base_url, "timeout_s": timeout_s, "connect_timeout_s": 2.0}
        },
        "models": {"m": {"upstream": "up", "price": PRICE}},
    }


class Gateway:
    """The gateway app in this process (uvicorn in a thread) in front of ``base_url``, with one key."""

    def __init__(self, tmp: Path, base_url: str, **options: object) -> None:
        tmp.mkdir(exist_ok=True)
        self.cfg = config_from_mapping(_config(tmp, base_url, **options), env={})  # type: ignore[arg-type]
        plain, key = create_key(self.cfg, name="k", limit="1")
        self.headers = {"authorization": f"Bearer {plain}"}
        self.scope = f"key:{key.id}"
        self.server = ThreadedServer(create_app(self.cfg))

    def __enter__(self) -> Gateway:
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)

    def post(self, body: dict[str, object] = BODY, **kw: object) -> httpx.Response:
        return httpx.post(self.server.url + "/v1/chat/completions", json=body, headers=self.headers, timeout=30, **kw)

    def books(self) -> tuple[int, int]:
        """(settled, held) micro-dollars of the key's scope."""
        led = open_ledger(self.cfg.ledger.url)
        try:
            row = next(iter(led.status([self.scope])))
            return row.settled, row.held
        finally:
            led.close()


def _app(handle: Callable[[Request], object]) -> Starlette:
    async def endpoint(request: Request) -> Response:
        out = handle(request)
        return await out if asyncio.iscoroutine(out) else out  # type: ignore[return-value]

    return Starlette(routes=[Route("/v1/chat/completions", endpoint, methods=["POST"])])


def _answer(request: Request) -> JSONResponse:
    return JSONResponse({"id": "x", "object": "chat.completion", "choices": [], "usage": USAGE})


class HangUp:
    """A raw upstream that reads each request, then writes ``reply`` (maybe nothing) and closes the socket."""

    def __init__(self, reply: bytes = b"") -> None:
        self.reply = reply
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.requests = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                self.requests += 1
                conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def hang_up() -> Iterator[Callable[[bytes], HangUp]]:
    made: list[HangUp] = []

    def make(reply: bytes = b"") -> HangUp:
        made.append(HangUp(reply))
        return made[-1]

    yield make
    for server in made:
        server.close()


@pytest.mark.parametrize("synchronous", ["NORMAL", "FULL"])
def test_a_call_is_settled_the_same_whether_the_ledger_runs_inline_or_in_a_thread(
    tmp_path: Path, synchronous: str
) -> None:
    cfg = config_from_mapping(_config(tmp_path, "http://127.0.0.1:9/v1", synchronous=synchronous), env={})
    rt = build_runtime(cfg)
    try:
        assert rt.inline_ledger is (synchronous == "NORMAL")
    finally:
        rt.close()
    with ThreadedServer(_app(_answer)) as up, Gateway(tmp_path / "gw", up.url + "/v1", synchronous=synchronous) as gw:
        for _ in range(3):
            got = gw.post()
            assert got.status_code == 200, got.text
            assert got.headers["x-litm-held-micros"] == "10000" and got.headers["x-litm-cost-micros"] == "2000"
            assert got.json()["usage"] == USAGE
        assert gw.books() == (3 * 2000, 0)
        assert int(got.headers["x-litm-remaining-micros"]) == 1_000_000 - 3 * 2000


def test_a_redis_ledger_is_worked_through_its_async_client_never_inline(tmp_path: Path) -> None:
    redis_ledger = {"url": "redis://127.0.0.1:9/0", "synchronous": "NORMAL"}
    cfg = config_from_mapping({**_config(tmp_path, "http://127.0.0.1:9/v1"), "ledger": redis_ledger}, env={})
    # Opening a runtime on that config would connect to Redis; the rules read only the config, so they are
    # read on a runtime built over a SQLite ledger with the Redis config in its place.
    rt = build_runtime(config_from_mapping(_config(tmp_path, "http://127.0.0.1:9/v1"), env={}))
    try:
        assert (rt.inline_ledger, rt.async_ledger) == (True, False)
        on_redis = dataclasses.replace(rt, config=cfg)
        assert (on_redis.inline_ledger, on_redis.async_ledger) == (False, True)
    finally:
        rt.close()


def test_an_upstream_nobody_listens_on_is_a_502_and_the_hold_is_refunded(tmp_path: Path) -> None:
    with Gateway(tmp_path, f"http://127.0.0.1:{free_port()}/v1") as gw:
        got = gw.post()
        assert got.status_code == 502 and got.json()["error"]["code"] == "upstream_unreachable", got.text
        assert "could not be reached" in got.json()["error"]["message"]
        assert gw.books() == (0, 0)


def test_an_upstream_that_does_not_answer_in_time_is_a_504_and_charged_in_full(tmp_path: Path) -> None:
    async def slow(request: Request) -> Response:
        await asyncio.sleep(3)
        return _answer(request)

    with ThreadedServer(_app(slow)) as up, Gateway(tmp_path, up.url + "/v1", timeout_s=0.5) as gw:
        got = gw.post()
        assert got.status_code == 504 and got.json()["error"]["code"] == "upstream_timeout", got.text
        assert gw.books() == (10_000, 0)  # it may have run to max_tokens


@pytest.mark.parametrize(
    "reply",
    [b"", b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{\"id\": "],
    ids=["no answer", "half an answer"],
)
def test_an_upstream_that_hangs_up_after_the_request_left_is_a_502_and_charged_in_full(
    tmp_path: Path, hang_up: Callable[[bytes], HangUp], reply: bytes
) -> None:
    up = hang_up(reply)
    with Gateway(tmp_path, up.url) as gw:
        got = gw.post()
        assert got.status_code == 502 and got.json()["error"]["code"] == "upstream_failed", got.text
        assert up.requests == 1
        assert gw.books() == (10_000, 0)


def test_no_cookie_an_upstream_sets_rides_on_a_later_request(tmp_path: Path) -> None:
    cookies: list[str | None] = []

    def tracking(request: Request) -> Response:
        cookies.append(request.headers.get("cookie"))
        answer = _answer(request)
        answer.set_cookie("session", "of-the-first-client")
        return answer

    with ThreadedServer(_app(tracking)) as up, Gateway(tmp_path, up.url + "/v1") as gw:
        assert gw.post().status_code == 200 and gw.post().status_code == 200
    assert cookies == [None, None]


def test_a_stream_passes_through_with_long_lines_and_either_line_ending(tmp_path: Path) -> None:
    long_text = "x" * 200_000  # one event far beyond a line reader's usual 64 KiB
    events = [
        b'data: {"choices": [{"delta": {"content": "' + long_text.encode() + b'"}}]}\r\n\r\n',
        b'data: {"choices": [], "usage": ' + json.dumps(USAGE).encode() + b"}\n\n",
        b"data: [DONE]\n\n",
    ]

    async def chunks() -> AsyncIterator[bytes]:
        for event in events:
            for at in range(0, len(event), 7000):  # events split across reads, as a network delivers them
                yield event[at : at + 7000]

    def streaming(request: Request) -> StreamingResponse:
        return StreamingResponse(chunks(), media_type="text/event-stream")

    body = {**BODY, "stream": True, "stream_options": {"include_usage": True}}
    with ThreadedServer(_app(streaming)) as up, Gateway(tmp_path, up.url + "/v1") as gw:
        got = gw.post(body)
        assert got.status_code == 200
        data = [line for line in got.text.splitlines() if line.startswith("data: ")]
        assert len(data) == 3 and json.loads(data[0][6:])["choices"][0]["delta"]["content"] == long_text
        assert gw.books() == (2000, 0)


@pytest.mark.parametrize("lock_before", ["reserve", "settle"])
def test_a_write_lock_held_elsewhere_moves_the_ledger_work_off_the_event_loop(tmp_path: Path, lock_before: str) -> None:
    # On SQLite NORMAL the ledger works on the event loop, waiting at most a few ms for the write lock; a lock
    # held longer (here a second connection's open transaction, as a long `litm spend` command would) moves
    # the reservation or the settlement to a thread: the request waits for the lock, the worker does not.
    async def slow(request: Request) -> Response:
        await asyncio.sleep(0.5)
        return _answer(request)

    with ThreadedServer(_app(slow)) as up, Gateway(tmp_path, up.url + "/v1") as gw:
        assert gw.post().status_code == 200  # warm: connections open, nothing else in the way
        answers: list[httpx.Response] = []
        blocker = sqlite3.connect(gw.cfg.ledger.url, isolation_level=None)
        if lock_before == "reserve":
            blocker.execute("BEGIN IMMEDIATE")
        caller = threading.Thread(target=lambda: answers.append(gw.post()))
        caller.start()
        if lock_before == "settle":
            time.sleep(0.2)  # the reservation is booked; the upstream answers at 0.5 s
            blocker.execute("BEGIN IMMEDIATE")
        time.sleep(0.7)
        started = time.monotonic()
        health = httpx.get(gw.server.url + "/healthz", timeout=10)
        waited = time.monotonic() - started
        blocker.execute("ROLLBACK")
        blocker.close()
        caller.join(timeout=30)
        assert health.status_code == 200 and waited < 0.3, waited
        assert answers and answers[0].status_code == 200, answers
        assert answers[0].headers["x-litm-cost-micros"] == "2000"
        assert gw.books() == (2 * 2000, 0)
