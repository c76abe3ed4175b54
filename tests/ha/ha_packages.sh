#!/usr/bin/env bash
# The HA layer's packages (tests/ha), as `make ha-packages` (a prerequisite of `make test` when
# that layer runs) and CI ask: Debian's etcd-server, patroni and pgbackrest, installed with
# apt-get as root when missing, beside the machine's PostgreSQL binaries.  The tests start and
# remove their own etcd members and Patroni nodes; the packages' own services are kept from
# starting at install (policy-rc.d), so no stray etcd or Patroni holds a port or a data folder.
set -euo pipefail

have() { command -v etcd >/dev/null && command -v patroni >/dev/null && command -v pgbackrest >/dev/null; }
pg_bins() { compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; }

if have && pg_bins; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  # The rest of the suite runs; the HA tests fail saying what is missing.
  echo "note: the HA tests (tests/ha) need etcd, patroni, pgbackrest and PostgreSQL's binaries: as root," >&2
  echo "      'make ha-packages' installs them (apt-get install etcd-server patroni pgbackrest postgresql)" >&2
  exit 0
fi
command -v apt-get >/dev/null || { echo "error: no apt-get here: install etcd, patroni, pgbackrest and PostgreSQL" >&2; exit 1; }
packages="etcd-server patroni pgbackrest"
pg_bins || packages="$packages postgresql"
echo "installing $packages (apt-get)"
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e $policy ]; then
  printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy && made_policy=1
fi
trap 'if [ $made_policy = 1 ]; then rm -f $policy; fi' EXIT
DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y -q $packages >/dev/null
have && pg_bins || { echo "error: installed $packages, yet etcd, patroni, pgbackrest or postgres is missing" >&2; exit 1; }
