"""The ``local`` backend: GGUF models run in-process by llama.cpp (``llama-cpp-python``).

One module per job: :mod:`~litm.models._local.pool` (the process-wide pool of loaded models),
:mod:`~litm.models._local.kv_reuse` (reusing the KV cache without changing answers),
:mod:`~litm.models._local.tokenizer` (llama.cpp's tokenizer, exact counts) and
:mod:`~litm.models._local.model` (:class:`LocalModel`: chat through the model's own template, generation).

>>> from litm.models._local import LocalModel, ReuseMode, unload_all
"""

from litm.models._local.kv_reuse import ReuseMode
from litm.models._local.model import LocalModel
from litm.models._local.pool import MIN_N_CTX, default_threads, unload_all
from litm.models._local.tokenizer import LlamaTokenizer

__all__ = ["MIN_N_CTX", "LlamaTokenizer", "LocalModel", "ReuseMode", "default_threads", "unload_all"]
