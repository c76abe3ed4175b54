#!/usr/bin/env bash
# Local base images for the compose test (tests/compose), made from Debian packages only, for
# machines that reach Debian's and PyPI's mirrors but no image registry:
#   <prefix>/debian:bookworm    debootstrap --variant=minbase (with the machine's local CAs), `docker import`
#   <prefix>/python:bookworm    + python3 (3.11) in a venv on PATH: `python` and `pip` as in python:3.11-slim
#   <prefix>/postgres:bookworm  + Debian's postgresql (15) and images/postgres-entrypoint.sh
#   <prefix>/redis:bookworm     + Debian's redis-server (7.0)
# An image already present is kept: they are built once and reused.  Test-only: production builds
# from the official images (Dockerfile's BASE_IMAGE default, compose.yaml).
# Usage: tests/compose/base_images.sh [PREFIX]   (default qd-local; needs root, docker, debootstrap)
set -euo pipefail
prefix=${1:-qd-local}
suite=bookworm
mirror=${QD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
here=$(cd "$(dirname "$0")" && pwd)
export DOCKER_BUILDKIT=0  # the classic builder: the engine's own, no buildx plugin needed

have() { docker image inspect "$1" >/dev/null 2>&1; }
say() { printf '[base_images +%ds] %s\n' "$SECONDS" "$*"; }

if ! have "$prefix/debian:$suite"; then
  command -v debootstrap >/dev/null || { echo "error: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 1; }
  root=$(mktemp -d /var/tmp/qd-debootstrap.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  say "debootstrap --variant=minbase $suite from $mirror"
  debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.log" 2>&1 ||
    { tail -20 "$root.log" >&2; rm -f "$root.log"; exit 1; }
  rm -f "$root.log"
  # As in Debian's official image: no service starts while packages install, and apt keeps no
  # package files or lists it does not need; the updates and security suites are in sources.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$root/etc/apt/apt.conf.d/90qd-minimal"
  cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror $suite main
deb $mirror $suite-updates main
deb ${mirror%/debian}/debian-security $suite-security main
SOURCES
  # The machine's own certificate authorities (a TLS-inspecting proxy's, say): pip inside the
  # images reaches PyPI as the machine does (ca-certificates' update-ca-certificates adds them).
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  fi
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  say "docker import $prefix/debian:$suite"
  tar -C "$root" -c . | docker import -c 'CMD ["bash"]' - "$prefix/debian:$suite" >/dev/null
  rm -rf "$root"
  trap - EXIT
fi

build() {  # build NAME: images/NAME.Dockerfile on <prefix>/debian
  local tag="$prefix/$1:$suite"
  have "$tag" && return 0
  say "docker build $tag"
  docker build -q --network host --build-arg "BASE=$prefix/debian:$suite" \
    -f "$here/images/$1.Dockerfile" -t "$tag" "$here/images" >/dev/null
}
build python
build postgres
build redis
say "ready: $(docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' "$prefix/*" | tr '\n' ' ')"
