"""For the gateway tests: a stand-in upstream and real servers on loopback.

The stand-in answers like OpenAI (Chat Completions, Responses) and Anthropic (Messages), plain and streamed,
with usage; it is a double of the paid APIs, the one boundary the tests cannot reach. It records every
request it receives (path, headers, body), answers with a fixed usage (``prompt_tokens`` 10, output the
request's limit capped at ``output``), waits ``delay_s`` before answering (``event_delay_s`` between
the events of a stream), and fails on purpose for model
names ``fail-<status>``. Both it and the gateway run under real uvicorn on a free loopback port.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from fixtures_server import free_port

INPUT = 10  # the stand-in's reported prompt tokens
OUTPUT = 5  # the most output tokens it reports


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class StandIn:
    """The upstream double; ``seen`` is every request it received, in order."""

    delay_s: float = 0.0
    event_delay_s: float = 0.0  # between the events of a stream
    break_streams: bool = False  # drop the connection after a stream's first event
    output: int = OUTPUT
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, path: str | None = None) -> int:
        with self.lock:
            return sum(1 for s in self.seen if path is None or s.path == path)

    def app(self) -> Starlette:
        async def handle(request: Request) -> Response:
            body = json.loads(await request.body())
            with self.lock:
                self.seen.append(Seen(request.url.path, dict(request.headers), body))
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            model = str(body.get("model", ""))
            if model.startswith("fail-"):
                # Echoes the credential it was sent, as a careless provider might in an error message.
                status = int(model.split("-")[1])
                sent = request.headers.get("authorization", "") + request.headers.get("x-api-key", "")
                return JSONResponse({"error": {"message": f"failing on purpose (credential {sent!r})",
                                               "type": "server_error"}}, status_code=status)  # fmt: skip
            limit = body.get("max_completion_tokens") or body.get("max_tokens") or body.get("max_output_tokens") or 99
            out = min(int(limit), self.output)
            path = request.url.path
            if body.get("stream"):
                return StreamingResponse(self._events(path, body, out), media_type="text/event-stream")
            if path.endswith("/chat/completions"):
                return JSONResponse({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
                                     "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                                                  "finish_reason": "stop"}],
                                     "usage": {"prompt_tokens": INPUT, "completion_tokens": out,
                                               "total_tokens": INPUT + out}})  # fmt: skip
            if path.endswith("/responses"):
                return JSONResponse({"id": "resp_1", "object": "response", "created_at": 0, "model": model,
                                     "status": "completed", "output": [{"type": "message", "id": "m1",
                                     "role": "assistant", "status": "completed", "content": [
                                         {"type": "output_text", "text": "hi", "annotations": []}]}],
                                     "usage": {"input_tokens": INPUT, "output_tokens": out, "total_tokens": INPUT + out,
                                               "input_tokens_details": {"cached_tokens": 0},
                                               "output_tokens_details": {"reasoning_tokens": 0}}})  # fmt: skip
            if path.endswith("/count_tokens"):
                return JSONResponse({"input_tokens": INPUT})
            return JSONResponse({"id": "msg_1", "type": "message", "role": "assistant", "model": model,
                                 "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
                                 "stop_sequence": None,
                                 "usage": {"input_tokens": INPUT, "output_tokens": out}})  # fmt: skip

        return Starlette(routes=[Route("/{path:path}", handle, methods=["POST"])])

    async def _events(self, path: str, body: dict[str, Any], out: int) -> AsyncIterator[bytes]:
        def sse(data: Any, event: str | None = None) -> bytes:
            head = f"event: {event}\n" if event else ""
            return f"{head}data: {json.dumps(data)}\n\n".encode()

        model = body.get("model")
        if path.endswith("/chat/completions"):
            for n, text in enumerate(("h", "i")):
                if n and self.break_streams:
                    raise ConnectionResetError("the stand-in drops the stream on purpose")
                yield sse({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model,
                           "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})  # fmt: skip
                await asyncio.sleep(self.event_delay_s)
            if (body.get("stream_options") or {}).get("include_usage"):
                usage = {"prompt_tokens": INPUT, "completion_tokens": out, "total_tokens": INPUT + out}
                yield sse({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [],
                           "usage": usage})  # fmt: skip
            yield b"data: [DONE]\n\n"
        elif path.endswith("/responses"):
            usage = {
                "input_tokens": INPUT,
                "output_tokens": out,
                "total_tokens": INPUT + out,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            }
            base = {"id": "resp_1", "object": "response", "created_at": 0, "model": model, "output": [],
                    "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}  # fmt: skip
            yield sse({"type": "response.created", "sequence_number": 0,
                       "response": {**base, "status": "in_progress"}}, "response.created")  # fmt: skip
            yield sse({"type": "response.output_text.delta", "sequence_number": 1, "item_id": "m1",
                       "output_index": 0, "content_index": 0, "delta": "hi", "logprobs": []},
                      "response.output_text.delta")  # fmt: skip
            yield sse({"type": "response.completed", "sequence_number": 2,
                       "response": {**base, "status": "completed", "usage": usage}}, "response.completed")  # fmt: skip
        elif path.endswith("/v1/messages"):
            yield sse({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                       "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
                       "usage": {"input_tokens": INPUT, "output_tokens": 1}}}, "message_start")  # fmt: skip
            yield sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                      "content_block_start")  # fmt: skip
            yield sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
                      "content_block_delta")  # fmt: skip
            yield sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
            yield sse({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                       "usage": {"output_tokens": out}}, "message_delta")  # fmt: skip
            yield sse({"type": "message_stop"}, "message_stop")


class ThreadedServer:
    """An ASGI app under real uvicorn in a background thread, on a free loopback port."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    access_log=False, lifespan="on"))  # fmt: skip
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ThreadedServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


class GatewayProcess:
    """``litm serve --config FILE`` as a child process (its own workers), stderr captured to ``log``."""

    def __init__(self, config: Path, log: Path, env: dict[str, str], port: int, args: tuple[str, ...] = ()) -> None:
        self.config, self.log, self.port, self.args = config, log, port, args
        self.env = {**os.environ, **env}
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> GatewayProcess:
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "litm", "serve", "--config", str(self.config),
                                          *self.args], stdout=out, stderr=subprocess.STDOUT, env=self.env)  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"litm serve exited with {self.proc.returncode}: {self.log.read_text()}")
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=1) as resp:
                    if resp.status == 200:
                        return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"litm serve did not become ready: {self.log.read_text()}")

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
