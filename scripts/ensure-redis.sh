#!/usr/bin/env bash
# Make sure a real redis-server binary is on PATH for the spend-ledger tests (make test calls this).
#
# Why Debian's package: it is the real server, built and patched by Debian, and installable here with the
# system's own package manager; the PyPI wheels that bundle a redis-server binary are unofficial rebuilds.
# The tests start their own server on 127.0.0.1 (tests/fixtures_redis.py); this script only installs it.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "ensure-redis: installing Debian's redis-server" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  command -v redis-server >/dev/null 2>&1 && exit 0
fi
echo "ensure-redis: redis-server is missing; install it (apt-get install redis-server) to run the Redis tests" >&2
# Under CI a missing server is a failure; locally the Redis tests skip with this reason.
if [ -n "${CI:-}" ]; then
  exit 1
fi
exit 0
