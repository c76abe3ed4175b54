#!/usr/bin/env bash
# A running Docker engine for the compose test (tests/compose), as `make docker-engine` (a
# prerequisite of `make test`) and CI ask: nothing to do when one answers; as root, Debian's
# docker.io and debootstrap are installed with apt-get when missing and dockerd is started in
# the background (cgroupfs; overlay2, else vfs).  Not root and no engine: a note, and the
# compose test skips itself with the same reason (under CI it fails instead).
set -euo pipefail
log=${QD_DOCKERD_LOG:-/var/log/qd-dockerd.log}

engine_up() { docker info >/dev/null 2>&1; }

if command -v docker >/dev/null && engine_up; then
  command -v debootstrap >/dev/null || [ "$(id -u)" != 0 ] ||
    { echo "installing debootstrap (apt-get)"; DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null; }
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "note: no Docker engine answers and we are not root: the compose test (tests/compose) will be skipped;" >&2
  echo "      as root, 'make docker-engine' installs docker.io and debootstrap and starts dockerd" >&2
  exit 0
fi
if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
  command -v apt-get >/dev/null || { echo "error: no dockerd and no apt-get: install a Docker engine and debootstrap" >&2; exit 1; }
  echo "installing docker.io and debootstrap (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io debootstrap >/dev/null
fi
for driver in overlay2 vfs; do
  echo "starting dockerd (storage driver $driver; log $log)"
  mkdir -p "$(dirname "$log")"
  setsid dockerd --storage-driver "$driver" --exec-opt native.cgroupdriver=cgroupfs >>"$log" 2>&1 </dev/null &
  pid=$!
  for _ in $(seq 60); do
    if engine_up; then echo "Docker engine up: $(docker info --format '{{.ServerVersion}} {{.Driver}}')"; exit 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
done
echo "error: dockerd did not start (see $log)" >&2
tail -20 "$log" >&2
exit 1
