"""Shared test settings."""

from __future__ import annotations

import os

# Haystack reports usage to PostHog unless told not to; tests never phone home (set before it is imported).
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from hypothesis import HealthCheck, settings

# In CI (the CI variable is set) a skipped test fails, with its reason: see ci_skips.py.
from ci_skips import (  # noqa: F401
    pytest_make_collect_report,
    pytest_runtest_makereport,
    pytest_sessionfinish,
    pytest_terminal_summary,
)

# Standard-library copies and the offline GPT-4 tokenizer for the code-context tests.
from code_fixtures import gpt4, json_root, stdlib_root  # noqa: F401

# The embedded default model, loaded once per module that asks for `gemma`.
from fixtures_models import gemma_fixture  # noqa: F401

# A real Redis server (Debian's redis-server) for the spend-ledger tests; see fixtures_redis.py.
from fixtures_redis import private_redis_fixture, redis_namespace_fixture, redis_server_fixture  # noqa: F401

# One llama.cpp server for the whole session, shared by every test module that asks for `llama_server`.
from fixtures_server import llama_server_fixture  # noqa: F401

# CI machines have 2 slow cores; deadlines would make property tests flaky without testing anything.
settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
