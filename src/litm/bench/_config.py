"""What a benchmark run measures: :class:`BenchConfig`, validated when it is made, and its typed error.

Example:
    >>> BenchConfig(questions=20, ks=(10, 20)).checkpoints(10, ())
    [1, 5, 10]
    >>> BenchConfig(ks=(1,))
    Traceback (most recent call last):
        ...
    litm.errors.BenchError: k must be >= 2, got (1,)
"""

from __future__ import annotations

from dataclasses import dataclass

from litm.bench._compression import COMPRESS_ARMS
from litm.bench._design import ARMS, GOLD_DESIGNS, NQ_ARMS, STRATEGIES
from litm.consistency._permute import MAX_CALLS
from litm.errors import BenchError
from litm.models import Model
from litm.models._logprobs import supports_logprobs

__all__ = ["BENCH_VERSION", "BenchConfig", "BenchError"]

BENCH_VERSION = 1


@dataclass(frozen=True)
class BenchConfig:
    """What to run. ``questions`` evaluation questions per ``k``; subsets take the first questions."""

    questions: int = 100
    ks: tuple[int, ...] = (10,)
    strategies: tuple[str, ...] = STRATEGIES
    direct_questions: int = 20
    direct_ranks: tuple[int, ...] = ()  # empty: 1, the middle and k
    ablation_questions: int = 30
    ablation_slots: tuple[int, ...] = ()  # empty: 1, the middle and k
    #: Prompt arms of the ablation, each beside the slot run's ``plain`` prompt (see :data:`~litm.bench._design.ARMS`).
    ablation_arms: tuple[str, ...] = NQ_ARMS
    #: Gold-set designs of a multi-gold question that get the ablation arms (see :mod:`litm.bench._goldsets`).
    ablation_designs: tuple[str, ...] = ("middle",)
    #: ``nq``, ``hotpotqa``, ``2wiki`` or a data file, and where the retriever order comes from
    #: (:mod:`litm.bench._sources`).
    data: str = "nq"
    retriever: str = "auto"
    controls: bool = True
    max_tokens: int = 16
    seed: int = 0
    #: ``completion`` (plain prompt string), ``chat`` (the same text as one user message, through the
    #: model's chat template) or ``auto``: chat when the model has a chat template (instruct models).
    prompt_format: str = "auto"
    #: Score every prompt also by the teacher-forced log-probability of each accepted answer: ``auto`` (when
    #: the model can, see :func:`litm.models._logprobs.supports_logprobs`), ``on`` or ``off``.
    likelihood: str = "auto"
    #: Compression arms (:mod:`litm.bench._compression`): each compresses a question's documents to
    #: ``1/ratio`` of their tokens at every ratio, with the gold passage at each of ``compress_slots``
    #: (empty: 1, the middle and k) or, for a multi-gold question, under each of ``compress_designs``.
    compress_arms: tuple[str, ...] = ()
    compress_ratios: tuple[float, ...] = (2.0, 4.0)
    compress_slots: tuple[int, ...] = ()
    compress_designs: tuple[str, ...] = ("middle", "early")
    #: The ``lm`` compression scorer's model (a local spec; ``local`` is the embedded model).
    compress_model: str = "local"
    #: Run only the compression arms (no strategies or ablation): the uncompressed rows come from ``baseline``,
    #: a committed run of the same questions on the same model, or, without one, only the original prompts
    #: the compressed ones pair with are answered (:func:`~litm.bench._jobs.original_jobs`).
    compress_only: bool = False
    baseline: str | None = None
    #: The ``psc`` arm (:mod:`litm.bench._consistency`): permutation self-consistency with this many calls per
    #: prompt (0: off), at each of ``psc_slots`` (empty: 1, the middle and k) or, multi-gold, ``psc_designs``.
    psc_calls: int = 0
    psc_slots: tuple[int, ...] = ()
    psc_designs: tuple[str, ...] = ("middle",)
    #: Run only the psc arm; the plain rows it is paired with come from ``baseline``, else from each row's call 0
    #: (the plain prompt, byte for byte).
    psc_only: bool = False
    #: Run only the anchor ablation: each arm and the plain prompt it is paired with, at ``ablation_slots`` (a
    #: multi-gold question: at ``ablation_designs``) on the first ``ablation_questions``
    #: (:func:`~litm.bench._jobs.ablation_jobs`), without the slot sweep or the strategies.
    ablation_only: bool = False

    def __post_init__(self) -> None:
        if self.questions < 1:
            raise BenchError(f"questions must be >= 1, got {self.questions}")
        if not self.ks or any(k < 2 for k in self.ks):
            raise BenchError(f"k must be >= 2, got {self.ks}")
        bad = [s for s in self.strategies if s not in STRATEGIES]
        if bad:
            raise BenchError(f"unknown strategies {bad}; choose from {', '.join(STRATEGIES)}")
        bad = [a for a in self.ablation_arms if a not in ARMS or a == "plain"]
        if bad:
            raise BenchError(f"unknown ablation arms {bad}; choose from {', '.join(a for a in ARMS if a != 'plain')}")
        bad = [d for d in self.ablation_designs if d not in GOLD_DESIGNS]
        if bad:
            raise BenchError(f"unknown gold-set designs {bad}; choose from {', '.join(GOLD_DESIGNS)}")
        if self.max_tokens < 1:
            raise BenchError("max_tokens must be >= 1")
        if self.prompt_format not in ("auto", "completion", "chat"):
            raise BenchError(f"prompt_format must be auto, completion or chat, got {self.prompt_format!r}")
        if self.likelihood not in ("auto", "on", "off"):
            raise BenchError(f"likelihood must be auto, on or off, got {self.likelihood!r}")
        bad = [a for a in self.compress_arms if a not in COMPRESS_ARMS]
        if bad:
            raise BenchError(f"unknown compression arms {bad}; choose from {', '.join(COMPRESS_ARMS)}")
        bad_ratios = [x for x in self.compress_ratios if not (isinstance(x, int | float) and 1 < x < 1e6)]
        if bad_ratios or (self.compress_arms and not self.compress_ratios):
            raise BenchError(f"compression ratios must be numbers above 1 (4 keeps a quarter), got {bad_ratios}")
        bad = [d for d in self.compress_designs if d not in GOLD_DESIGNS]
        if bad:
            raise BenchError(f"unknown gold-set designs {bad}; choose from {', '.join(GOLD_DESIGNS)}")
        if self.compress_only and not self.compress_arms:
            raise BenchError("compress_only needs compression arms (--compress drop,embed,...)")
        calls = self.psc_calls
        if isinstance(calls, bool) or not isinstance(calls, int) or not 0 <= calls <= MAX_CALLS:
            raise BenchError(f"psc_calls must be an integer from 0 (off) to {MAX_CALLS}, got {self.psc_calls!r}")
        bad = [d for d in self.psc_designs if d not in GOLD_DESIGNS]
        if bad:
            raise BenchError(f"unknown gold-set designs {bad}; choose from {', '.join(GOLD_DESIGNS)}")
        if self.psc_only and not self.psc_calls:
            raise BenchError("psc_only needs psc calls (--psc-calls 5)")
        if self.ablation_only:
            if self.ablation_questions < 1 or not self.ablation_arms:
                raise BenchError("ablation_only needs ablation questions and arms (--ablation 100 --arms minimal)")
            if self.compress_arms or self.psc_calls:
                raise BenchError("ablation_only runs the ablation alone: run compression or psc arms separately")

    def resolved_likelihood(self, model: Model) -> bool:
        """Whether this run scores answer log-probabilities (``on`` with a model that cannot is an error)."""
        if self.likelihood == "on" and not supports_logprobs(model):
            raise BenchError(f"{model.spec or model.name} cannot score answer log-probabilities; use --likelihood off")
        return self.likelihood == "on" or (self.likelihood == "auto" and supports_logprobs(model))

    def resolved_format(self, model: Model) -> str:
        """``completion`` or ``chat`` for this model (``auto``: chat exactly when the model supports it)."""
        if self.prompt_format != "auto":
            return self.prompt_format
        return "chat" if model.supports_chat else "completion"

    def checkpoints(self, k: int, given: tuple[int, ...]) -> list[int]:
        """The gold ranks or slots a subset uses for ``k``: ``given`` (those within 1..k), else 1, middle, k."""
        picks = [x for x in given if 1 <= x <= k] if given else [1, (k + 1) // 2, k]
        return sorted(set(picks))

    def identity(self) -> dict[str, object]:
        """The settings that define the prompts and the scoring: a resume must match them."""
        out: dict[str, object] = {
            "bench_version": BENCH_VERSION,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "data": self.data,
            "retriever": self.retriever,
        }
        if self.compress_arms:
            # The lm scorer's model shapes the compressed prompts (runs without compression never record it).
            out["compress_model"] = self.compress_model
        if self.psc_calls:
            out["psc_calls"] = self.psc_calls
        return out
