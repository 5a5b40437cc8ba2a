"""Permutation self-consistency: the orders, the vote, the calls (real SDK over HTTP, the real embedded model)."""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from litm.cli import app
from litm.consistency import PscAnswer, ask, psc, vote
from litm.consistency._permute import MAX_CALLS, permutations
from litm.consistency._psc import DEFAULT_BUILDER
from litm.consistency._rag import uncited
from litm.errors import InvalidOptionError, InvalidOptionTypeError, LitmError, PromptError, UnsupportedTypeError
from litm.eval._scoring import normalize
from litm.models import load_model
from litm.models._local import LocalModel
from litm.prompt import AnchorOptions, PromptBuilder
from litm.rag import Pipeline
from litm.retrieve import Index

# Answers that normalise together ("Paris", "paris.") or to nothing (abstentions).
ANSWER = st.sampled_from(["Paris", "paris.", "The Paris", "Lyon", "lyon", "Nice", "", "  ", "?!"])
ANSWERS = st.lists(ANSWER, min_size=1, max_size=12)


# -- the vote -------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(ANSWERS)
def test_the_winner_has_the_most_votes_and_a_strict_majority_always_wins(answers: list[str]) -> None:
    out = vote(answers)
    counts = Counter(k for k in map(normalize, answers) if k)
    assert out.votes == dict(counts)
    if not counts:
        assert (out.answer, out.normalized, out.winner, out.agreement) == ("", "", -1, 0.0)
        return
    assert out.votes[out.normalized] == max(counts.values())
    majority = [k for k, c in counts.items() if c * 2 > sum(counts.values())]
    if majority:
        assert out.normalized == majority[0]
    # The answer is the winning call's own text, and the share is over every call made.
    assert out.answer == answers[out.winner] and normalize(out.answer) == out.normalized
    assert out.agreement == counts[out.normalized] / len(answers)


@settings(max_examples=150, deadline=None)
@given(ANSWERS)
def test_ties_go_to_the_answer_given_first(answers: list[str]) -> None:
    out = vote(answers)
    keys = [normalize(a) for a in answers]
    tied = {k for k, c in out.votes.items() if c == max(out.votes.values(), default=0)}
    if tied:
        assert out.winner == min(keys.index(k) for k in tied)
        assert vote(answers) == out  # deterministic: same answers, same result


@settings(max_examples=150, deadline=None)
@given(ANSWERS, st.randoms(use_true_random=False))
def test_the_same_votes_in_another_call_order_give_the_same_result(answers: list[str], rnd: Any) -> None:
    shuffled = list(answers)
    rnd.shuffle(shuffled)
    a, b = vote(answers), vote(shuffled)
    assert Counter(a.votes) == Counter(b.votes) and a.agreement == b.agreement
    top = max(a.votes.values(), default=0)
    if sum(c == top for c in a.votes.values()) == 1:
        # A unique maximum does not depend on which call came first; only a tie does.
        assert a.normalized == b.normalized


def test_vote_refuses_what_is_not_a_list_of_strings() -> None:
    for bad in ("Paris", ["Paris", 3], [None]):
        with pytest.raises(InvalidOptionTypeError):
            vote(bad)  # type: ignore[arg-type]


# -- the orders -----------------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 9), st.integers(1, MAX_CALLS), st.integers(-(2**40), 2**40), st.booleans())
def test_orders_are_distinct_seeded_permutations_with_the_given_order_first(
    n: int, calls: int, seed: int, keep_first: bool
) -> None:
    orders = permutations(n, calls, seed=seed, keep_first=keep_first)
    assert orders == permutations(n, calls, seed=seed, keep_first=keep_first)  # reproducible
    assert len(orders) == min(calls, math.factorial(n)) and len(set(orders)) == len(orders)
    assert all(sorted(o) == list(range(n)) for o in orders)
    if keep_first:
        assert orders[0] == tuple(range(n))
    # More calls extend the same sequence: a run with m + 1 calls repeats the first m orders.
    assert permutations(n, min(calls + 1, MAX_CALLS), seed=seed, keep_first=keep_first)[: len(orders)] == orders


def test_seeds_give_different_orders_and_the_numbers_are_pinned() -> None:
    assert permutations(5, 4, seed=1) != permutations(5, 4, seed=2)
    # Pinned: a change to the draw would silently re-shuffle every committed psc run.
    assert permutations(4, 3, seed=0) == ((0, 1, 2, 3), (2, 0, 1, 3), (0, 1, 3, 2))


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((0, 3), InvalidOptionError),
        ((3, 0), InvalidOptionError),
        ((3, MAX_CALLS + 1), InvalidOptionError),
        ((3, True), InvalidOptionTypeError),
        ((3, 2.0), InvalidOptionTypeError),
        (("3", 2), InvalidOptionTypeError),
    ],
)
def test_bad_orders_are_typed_errors(args: tuple[Any, Any], error: type[LitmError]) -> None:
    with pytest.raises(error):
        permutations(*args)


# -- calls over HTTP: the openai-compatible backend and its real SDK against a tiny local server ----------------

_FIRST_TITLE = re.compile(r"Document \[1\]\(Title: ([^)]*)\)")
_FIRST_ID = re.compile(r'<document id="([^"]+)"')


class _Server:
    """An OpenAI-compatible ``/v1/completions`` that answers with the title of the first document, after
    ``delay`` seconds, and records how many requests were in flight at once."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.peak = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.requests.append(body)
                    outer.in_flight += 1
                    outer.peak = max(outer.peak, outer.in_flight)
                time.sleep(outer.delay)
                with outer.lock:
                    outer.in_flight -= 1
                found = _FIRST_TITLE.search(body["prompt"])
                cited = _FIRST_ID.search(body["prompt"])
                # Liu's format: the first title; litm's anchors: the first id, cited as a chat model asked to would.
                text = (f" {found.group(1)}\nmore" if found else
                        f"{cited.group(1)} [{cited.group(1)}]\nmore" if cited else " nothing")  # fmt: skip
                reply = {
                    "id": "cmpl-1", "object": "text_completion", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
                    "usage": {"prompt_tokens": len(body["prompt"].split()), "completion_tokens": 2,
                              "total_tokens": len(body["prompt"].split()) + 2},
                }  # fmt: skip
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                # /v1/models: what load_model asks a server for the context window.
                data = json.dumps({"object": "list", "data": [{"id": "tiny", "object": "model", "created": 0,
                                   "owned_by": "me", "max_model_len": 8192}]}).encode()  # fmt: skip
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def spec(self) -> str:
        return f"openai-compatible:http://127.0.0.1:{self.httpd.server_address[1]}/v1@tiny"

    def model(self, **options: Any) -> Any:
        return load_model(self.spec, context_window=8192, max_retries=0, **options)


@pytest.fixture()
def server() -> Iterator[_Server]:
    srv = _Server()
    srv.thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


DOCS = [
    {"id": "a", "title": "Alpha", "text": "First."},
    {"id": "b", "title": "Beta", "text": "Second."},
    {"id": "c", "title": "Gamma", "text": "Third."},
    {"id": "d", "title": "Delta", "text": "Fourth."},
]


def test_each_call_sees_its_own_order_and_the_vote_follows_the_replies(server: _Server) -> None:
    out = psc(DOCS, "Which comes first?", server.model(), calls=5, seed=3)
    orders = permutations(4, 5, seed=3)
    assert out.orders == orders and out.n_calls == len(server.requests) == 5
    # Call i's prompt lists the documents in order i; the server answers with the first one's title.
    firsts = [DOCS[o[0]]["title"] for o in orders]
    assert [c.answer for c in out.calls] == firsts  # the first line of each reply
    assert [c.ids for c in out.calls] == [tuple(DOCS[i]["id"] for i in o) for o in orders]
    expected = vote(firsts)
    assert (out.answer, out.votes, out.winner) == (expected.answer, expected.votes, expected.winner)
    assert out.calls[0].prompt.text == DEFAULT_BUILDER.build(DOCS, "Which comes first?").text
    assert sorted(r["prompt"] for r in server.requests) == sorted(c.prompt.text for c in out.calls)
    assert all(r["temperature"] == 0 and r["stop"] == ["\n"] for r in server.requests)
    # The cost is the backend's usage, summed over the calls.
    assert out.input_tokens == sum(len(r["prompt"].split()) for r in server.requests)
    assert out.output_tokens == 10 and out.to_dict()["n_calls"] == 5
    assert json.loads(json.dumps(out.to_dict()))["votes"] == out.votes


def test_remote_calls_overlap_up_to_the_concurrency_bound(server: _Server) -> None:
    server.delay = 0.25
    start = time.perf_counter()
    out = psc(DOCS, "Which comes first?", server.model(), calls=6, concurrency=3)
    wall = time.perf_counter() - start
    assert out.n_calls == 6 and server.peak == 3
    # Six 0.25 s calls, three at a time: the wall time is shorter than the calls' latencies added up.
    assert out.latency_s >= 1.5 and wall < out.latency_s
    # The order of the result is the call order, whatever order the replies arrived in.
    assert out.orders == permutations(4, 6, seed=0)
    server.peak = 0
    psc(DOCS, "Which comes first?", server.model(concurrency=2), calls=4)  # the model's own bound by default
    assert server.peak == 2


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"calls": 0}, InvalidOptionError),
        ({"calls": MAX_CALLS + 1}, InvalidOptionError),
        ({"calls": "5"}, InvalidOptionTypeError),
        ({"docs": []}, InvalidOptionError),
        ({"docs": "one string"}, LitmError),
        ({"question": "  "}, PromptError),
        ({"builder": {"style": "liu"}}, InvalidOptionTypeError),
        ({"model": "openai:gpt-4o-mini"}, UnsupportedTypeError),
        ({"seed": 1.5}, InvalidOptionTypeError),
        ({"docs": [{"id": "x", "text": "a"}, {"id": "x", "text": "b"}]}, LitmError),  # duplicate ids
    ],
)
def test_bad_input_is_a_typed_error_before_any_call(server: _Server, kwargs: dict[str, Any], error: type) -> None:
    args: dict[str, Any] = {"docs": DOCS, "question": "Which?", "model": server.model(), **kwargs}
    with pytest.raises(error):
        psc(args.pop("docs"), args.pop("question"), args.pop("model"), **args)
    assert server.requests == []


def test_one_stop_string_is_one_stop_sequence(server: _Server) -> None:
    psc(DOCS, "Which comes first?", server.model(), calls=2, stop="\n\n", max_tokens=5)
    assert [(r["stop"], r["max_tokens"]) for r in server.requests] == [(["\n\n"], 5)] * 2


def test_fewer_orders_than_calls_make_fewer_calls(server: _Server) -> None:
    out = psc(DOCS[:2], "Which comes first?", server.model(), calls=5)
    assert out.n_calls == 2 and out.votes == {"alpha": 1, "beta": 1}
    assert out.answer == "Alpha" and out.agreement == 0.5  # the tie goes to call 0, the order given


# -- the real embedded model -------------------------------------------------------------------------------


@pytest.mark.model
def test_the_embedded_model_answers_every_order_and_votes(gemma: LocalModel) -> None:
    docs = [
        "Bern is the capital of Switzerland.",
        "Paris is the capital of France.",
        "Rome is the capital of Italy.",
    ]
    builder = PromptBuilder(anchors=AnchorOptions(style="liu", recap=False))
    out = psc(docs, "What is the capital of France?", gemma, calls=3, seed=0, builder=builder, max_tokens=8)
    assert isinstance(out, PscAnswer) and out.n_calls == 3
    assert out.orders[0] == (0, 1, 2) and len(set(out.orders)) == 3
    assert out.normalized == "paris" and out.votes["paris"] >= 2
    # The usage is llama.cpp's own: every prompt token of every call (reused ones included).
    assert out.input_tokens == sum(gemma.count_tokens(c.prompt.text) for c in out.calls)
    assert out.input_tokens == 3 * gemma.count_tokens(out.calls[0].prompt)


# -- over a RAG pipeline, in Python and on the command line ------------------------------------------------------


@pytest.fixture()
def index(tmp_path: Path) -> Path:
    pytest.importorskip("bm25s")
    made = Index.create(tmp_path / "idx", dense=False)
    made.add_texts([
        {"id": "tower", "text": "The Eiffel Tower opened in 1889 in Paris."},
        {"id": "bridge", "text": "The Tower Bridge in London opened in 1894."},
        {"id": "needle", "text": "The Space Needle in Seattle opened in 1962."},
    ])  # fmt: skip
    return tmp_path / "idx"


def test_ask_places_once_then_votes_over_orders_without_citations(server: _Server, index: Path) -> None:
    # The server answers with the first document's id, read from litm's id-and-title anchors (given).
    pipeline = Pipeline.from_index(index, model=server.model(), k=3, builder=PromptBuilder(anchors=AnchorOptions()))
    question = "When did the tower open?"
    prepared = pipeline.prepare(question)
    out = ask(pipeline, question, calls=4, seed=1)
    # Call 0 sends exactly the prompt ask() sends; the others the same documents in other orders.
    assert out.calls[0].prompt.text == prepared.prompt.text and out.calls[0].ids == tuple(prepared.prompt.ids)
    assert all(sorted(c.ids) == sorted(prepared.prompt.ids) for c in out.calls) and len(set(out.orders)) == 4
    # The server names the first document and cites it: the citation is not part of the vote.
    assert [c.answer for c in out.calls] == [c.ids[0] for c in out.calls]
    assert "[" not in "".join(out.votes) and out.answer == vote([c.ids[0] for c in out.calls]).answer
    assert len(server.requests) == 4 + 0  # prepare() sends nothing
    with pytest.raises(InvalidOptionError):
        ask(pipeline, question, calls=0)
    with pytest.raises(UnsupportedTypeError):
        ask("idx", question)  # type: ignore[arg-type]
    assert len(server.requests) == 4


def test_uncited_strips_citations_from_the_first_line() -> None:
    assert uncited("\n 1889 [tower] [2].\nmore [x]") == "1889 ."
    assert normalize(uncited("[a] Paris [b]")) == normalize(uncited("Paris [c]")) == "paris"


def test_cli_rag_psc_prints_the_vote_and_each_call(server: _Server, index: Path) -> None:
    base = ["rag", str(index), "When did the tower open?", "--model", server.spec, "--k", "3"]
    res = CliRunner().invoke(app, [*base, "--psc", "3"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("answer: ") and "votes: " in res.output and "of 3 calls" in res.output
    assert res.output.count("  <- ") == 3 and len(server.requests) == 3
    res = CliRunner().invoke(app, [*base, "--psc", "2", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["n_calls"] == 2 and len(data["calls"]) == 2 and data["votes"]
    res = CliRunner().invoke(app, [*base, "--psc", "40"])
    # A typed error (litm's entry point prints it as one line, exit code 2), raised before anything is sent.
    assert res.exit_code != 0 and isinstance(res.exception, InvalidOptionError)
    assert "calls must be between 1 and 32" in str(res.exception)
    assert len(server.requests) == 5
