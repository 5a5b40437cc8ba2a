"""Shared test settings."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# A real Redis server (Debian's redis-server) for the spend-ledger tests; see fixtures_redis.py.
from fixtures_redis import private_redis_fixture, redis_namespace_fixture, redis_server_fixture  # noqa: F401

# One llama.cpp server for the whole session, shared by every test module that asks for `llama_server`.
from fixtures_server import llama_server_fixture  # noqa: F401

# CI machines have 2 slow cores; deadlines would make property tests flaky without testing anything.
settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
