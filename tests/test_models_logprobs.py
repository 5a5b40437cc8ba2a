"""Teacher-forced log-probabilities on the real embedded models, checked against llama-cpp-python by hand.

The hand computation loads the same GGUF with llama-cpp-python's ``logits_all=True`` (every position's
logits kept), evaluates the prompt and the continuation itself, and takes ``log_softmax`` with numpy: once
with exactly the batch layout litm uses (values must agree to rounding), once as a single batch (values agree
to the batch-shape noise of llama.cpp, which a misplaced token index would exceed by nats).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from litm.errors import ContextWindowExceededError, InvalidOptionError
from litm.models import load_model
from litm.models._local import LocalModel
from litm.models._logprobs import Logprobs, supports_logprobs

np = pytest.importorskip("numpy")
llama_cpp = pytest.importorskip("llama_cpp")

pytestmark = pytest.mark.model

PROMPT = (
    "Write a high-quality answer for the given question using only the provided search results.\n\n"
    "Document [1](Title: Nobel Prize in Physics) The first Nobel Prize in Physics was awarded in 1901 to "
    "Wilhelm Conrad Röntgen, of Germany.\n\nQuestion: who got the first nobel prize in physics\nAnswer:"
)
ANSWERS = [" Wilhelm Conrad Röntgen", " Albert Einstein", " <start_of_turn>"]


@pytest.fixture(scope="module")
def reference(gemma: LocalModel) -> Iterator[object]:
    """The same file in llama-cpp-python with every position's logits kept (the hand computation)."""
    llm = llama_cpp.Llama(
        model_path=str(gemma.path), n_ctx=512, n_batch=512, logits_all=True, n_threads=gemma.n_threads,
        n_threads_batch=gemma.n_threads, flash_attn=True, seed=0, verbose=False,
    )  # fmt: skip
    yield llm
    llm.close()


def _log_softmax(rows: object) -> object:
    x = np.asarray(rows, dtype=np.float64)
    top = x.max(axis=1, keepdims=True)
    return x - top - np.log(np.exp(x - top).sum(axis=1, keepdims=True))


def _by_hand(llm: object, prompt_ids: Sequence[int], answer: str, *, same_layout: bool, shift: int = 0) -> list[float]:
    ids = list(llm.tokenize(answer.encode(), add_bos=False, special=False))  # type: ignore[attr-defined]
    p = len(prompt_ids)
    llm.reset()  # type: ignore[attr-defined]
    if same_layout:  # the prompt, then its last token again with the answer: litm's two batches
        llm.eval(list(prompt_ids))  # type: ignore[attr-defined]
        llm.n_tokens = p - 1  # type: ignore[attr-defined]
        llm.eval([prompt_ids[-1], *ids[:-1]])  # type: ignore[attr-defined]
    else:  # prompt and answer in one batch
        llm.eval([*prompt_ids, *ids])  # type: ignore[attr-defined]
    rows = _log_softmax(llm.scores[p - 1 + shift : p - 1 + shift + len(ids)])  # type: ignore[attr-defined]
    return [float(rows[i, t]) for i, t in enumerate(ids)]  # type: ignore[index]


def test_logprobs_equal_a_hand_computation(gemma: LocalModel, reference: object) -> None:
    got = gemma.continuation_logprobs(PROMPT, ANSWERS)
    prompt_ids = gemma.tokenizer.encode(PROMPT)
    assert supports_logprobs(gemma)
    for lp in got:
        assert isinstance(lp, Logprobs) and lp.prompt_tokens == len(prompt_ids)
        exact = _by_hand(reference, prompt_ids, lp.continuation, same_layout=True)
        assert lp.logprobs == pytest.approx(exact, abs=1e-6)
        one_batch = _by_hand(reference, prompt_ids, lp.continuation, same_layout=False)
        assert lp.logprobs == pytest.approx(one_batch, abs=1.0)
        assert lp.mean == pytest.approx(sum(one_batch) / len(one_batch), abs=0.2)
        # The check can see an off-by-one: read one row late, the values are nats away.
        late = _by_hand(reference, prompt_ids, lp.continuation, same_layout=False, shift=1)
        assert abs(lp.mean - sum(late) / len(late)) > 1.0
        assert "".join(lp.tokens) == lp.continuation and lp.mean == pytest.approx(sum(exact) / len(exact))
    # Special-token text in an answer is plain text, not a control token.
    assert len(got[2].tokens) > 1
    # The model reads its own document: the right answer is far likelier than a wrong one.
    assert got[0].mean > got[1].mean + 0.5


def test_values_do_not_depend_on_what_ran_before(gemma: LocalModel) -> None:
    cold = gemma.continuation_logprobs(PROMPT, ANSWERS[:2])
    gemma.complete(PROMPT, max_tokens=6, stop=["\n"])  # the KV cache now holds this prompt and an answer
    after_answer = gemma.continuation_logprobs(PROMPT, ANSWERS[:2])
    gemma.complete("Question: What is the capital of France?\nAnswer:", max_tokens=4)
    after_other = gemma.continuation_logprobs(PROMPT, ANSWERS[:2])
    assert [lp.logprobs for lp in cold] == [lp.logprobs for lp in after_answer] == [lp.logprobs for lp in after_other]
    # And scoring leaves generation untouched: the same answer as a cold run.
    assert (
        gemma.complete(PROMPT, max_tokens=6, stop=["\n"]).text
        == load_model("local", reuse_prefix="cold").complete(PROMPT, max_tokens=6, stop=["\n"]).text
    )


def test_chat_prompts_are_scored_after_the_template(reference: object) -> None:
    smol = load_model("local:smollm2")
    assert isinstance(smol, LocalModel)
    messages = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    (lp,) = smol.continuation_logprobs(messages, ["Paris"])
    assert lp.prompt_tokens == smol.tokenizer.count_messages(messages)
    (wrong,) = smol.continuation_logprobs(messages, ["Berlin"])
    assert lp.total > wrong.total


def test_bad_continuations_are_typed_errors(gemma: LocalModel) -> None:
    with pytest.raises(InvalidOptionError, match="non-empty string"):
        gemma.continuation_logprobs(PROMPT, [""])
    with pytest.raises(InvalidOptionError, match="not one string"):
        gemma.continuation_logprobs(PROMPT, " Paris")
    small = load_model("local", n_ctx=64)
    with pytest.raises(ContextWindowExceededError, match="64-token context window"):
        small.continuation_logprobs(PROMPT, [" Paris"])


def test_next_token_logprobs_are_the_hand_computed_distribution_head(gemma: LocalModel, reference: object) -> None:
    top = gemma.next_token_logprobs(PROMPT, top=5)
    prompt_ids = gemma.tokenizer.encode(PROMPT)
    p = len(prompt_ids)
    reference.reset()  # type: ignore[attr-defined]
    reference.eval(prompt_ids)  # type: ignore[attr-defined]
    one_batch = _log_softmax(reference.scores[p - 1 : p])[0]  # type: ignore[attr-defined,index]
    reference.n_tokens = p - 1  # type: ignore[attr-defined]
    reference.eval(prompt_ids[-1:])  # type: ignore[attr-defined]  # litm's layout: the last token on its own
    row = _log_softmax(reference.scores[p - 1 : p])[0]  # type: ignore[attr-defined,index]
    order = np.argsort(-row)[:5]
    assert [lp.continuation for lp in top] == [reference.detokenize([int(i)]).decode() for i in order]  # type: ignore[attr-defined]
    assert [lp.total for lp in top] == pytest.approx([float(row[i]) for i in order], abs=1e-6)
    # Another batch layout moves the values by hundredths of a nat, the size of noise that flips a close greedy call.
    assert [lp.total for lp in top] == pytest.approx([float(one_batch[i]) for i in order], abs=0.2)
    assert all(lp.n == 1 and lp.prompt_tokens == len(prompt_ids) for lp in top)
    assert [lp.total for lp in top] == sorted((lp.total for lp in top), reverse=True)
    # The head agrees with teacher forcing of the same token, and greedy decoding starts with it.
    (forced,) = gemma.continuation_logprobs(PROMPT, [top[0].continuation])
    assert forced.n == 1 and forced.total == pytest.approx(top[0].total, abs=1e-6)
    assert gemma.complete(PROMPT, max_tokens=1).text == top[0].continuation
    with pytest.raises(InvalidOptionError, match="positive integer"):
        gemma.next_token_logprobs(PROMPT, top=0)
