"""Running the gateway: uvicorn with one or more worker processes, each building its own runtime.

The parent checks the configuration and builds a runtime once (prices, tokenizers, secrets, the ledger),
so that a bad file fails before any worker starts; each worker then reads the same file (named in
``LITM_SERVE_CONFIG``) and the same ``LITM_SERVE__*`` variables. On SIGTERM or Ctrl-C uvicorn stops
accepting connections and waits up to ``server.graceful_timeout_s`` for requests and streams in flight,
which settle as they end.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from pathlib import Path

from litm.errors import MissingDependencyError
from litm.serve._config import CONFIG_ENV, ENV_PREFIX, load_config
from litm.serve._log import uvicorn_log_config
from litm.serve._runtime import build_runtime

__all__ = ["serve"]


def serve(config_path: str | Path | None, *, host: str | None = None, port: int | None = None,
          workers: int | None = None) -> None:  # fmt: skip
    """Serve the gateway of ``config_path`` until interrupted (``host``/``port``/``workers`` override it)."""
    try:
        import uvicorn
    except ImportError:
        raise MissingDependencyError("litm serve needs the serve extra: pip install 'litm[serve]'") from None
    for name, value in (("HOST", host), ("PORT", port), ("WORKERS", workers)):
        if value is not None:
            os.environ[f"{ENV_PREFIX}SERVER__{name}"] = str(value)
    config = load_config(config_path)
    build_runtime(config).close()
    if config.path is not None:
        os.environ[CONFIG_ENV] = str(config.path)
    made = ""
    if config.server.workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # Each worker writes its metric values here and /metrics sums them; set before any worker imports
        # prometheus_client, which reads it at import. A fresh folder: old values must not be summed.
        made = os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="litm-serve-metrics-")
    s = config.server
    try:
        uvicorn.run("litm.serve._app:create_app_from_env", factory=True, host=s.host, port=s.port,
                    workers=s.workers, log_level=s.log_level, access_log=False, http=s.http, loop=s.loop,
                    log_config=uvicorn_log_config(s.log_level), timeout_keep_alive=math.ceil(s.keep_alive_s),
                    timeout_graceful_shutdown=math.ceil(s.graceful_timeout_s), server_header=False)  # fmt: skip
    finally:
        if made:
            shutil.rmtree(made, ignore_errors=True)
