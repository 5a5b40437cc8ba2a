"""A real Redis server for tests: Debian's ``redis-server`` on 127.0.0.1, started by a pytest fixture.

``make test`` installs the binary when it is missing (``scripts/ensure-redis.sh``). Without it, the Redis
tests fail under CI (``CI`` set: a missing server must not turn into a green run that tested nothing)
and are skipped locally with the reason.

The server runs with no persistence (``--save ''``, ``--appendonly no``) in a temporary directory, on a
free port; each test gets its own namespace, so tests never see each other's keys.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fixtures_server import free_port


@dataclass
class RedisServer:
    """One redis-server process; ``stop()`` ends it (the tests of an unreachable ledger use that)."""

    port: int
    workdir: Path
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None
        cmd = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", str(self.workdir), "--protected-mode", "yes", "--maxmemory-policy", "noeviction"]  # fmt: skip
        log = (self.workdir / "redis.log").open("wb")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}: {self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer on port {self.port}: {self.log()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def log(self) -> str:
        path = self.workdir / "redis.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""


def require_redis() -> None:
    """Fail under CI, skip locally, when redis-server or the redis client is missing."""
    problems = []
    if shutil.which("redis-server") is None:
        problems.append("redis-server is not installed (run scripts/ensure-redis.sh)")
    try:
        import redis  # noqa: F401
    except ImportError:
        problems.append("the redis client is not installed (pip install 'litm[spend-redis]')")
    if problems:
        if os.environ.get("CI"):
            pytest.fail("; ".join(problems))
        pytest.skip("; ".join(problems))


def start_server(workdir: Path) -> RedisServer:
    require_redis()
    server = RedisServer(free_port(), workdir)
    server.start()
    return server


@pytest.fixture(scope="session", name="redis_server")
def redis_server_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One Redis server for the session."""
    server = start_server(tmp_path_factory.mktemp("redis"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(name="redis_namespace")
def redis_namespace_fixture() -> str:
    """A namespace no other test uses."""
    return f"t{uuid.uuid4().hex[:12]}"


@pytest.fixture(name="private_redis")
def private_redis_fixture(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis server of this test alone (it may stop it)."""
    server = start_server(tmp_path)
    try:
        yield server
    finally:
        server.stop()
