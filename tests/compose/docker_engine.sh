#!/usr/bin/env bash
# The Docker engine's packages for the compose test (tests/compose), as `make docker-engine` (a
# prerequisite of `make test`) and CI ask: as root, Debian's docker.io and debootstrap are
# installed with apt-get when missing.  Nothing is started here: the compose test starts its
# own dockerd when no engine answers and stops it when it is done
# (tests/support/compose_stack.py, `docker_engine`).  Not root and no engine: a note, and the
# compose test skips itself with the same reason (under CI it fails instead).
set -euo pipefail

if command -v dockerd >/dev/null && command -v debootstrap >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  if ! docker info >/dev/null 2>&1; then
    echo "note: no Docker engine answers and we are not root: the compose test (tests/compose) will be skipped;" >&2
    echo "      as root, 'make docker-engine' installs docker.io and debootstrap" >&2
  fi
  exit 0
fi
command -v apt-get >/dev/null || { echo "error: no dockerd and no apt-get: install a Docker engine and debootstrap" >&2; exit 1; }
echo "installing docker.io and debootstrap (apt-get)"
DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io debootstrap >/dev/null
command -v dockerd >/dev/null || { echo "error: docker.io installed but no dockerd on PATH" >&2; exit 1; }
