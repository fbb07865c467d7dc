#!/usr/bin/env bash
# Installs (when absent) and starts PostgreSQL and Redis on 127.0.0.1 for development and tests, and
# installs Prometheus (promtool and the server the observability tests start on ports of their own),
# python3-venv (for schemathesis, make fuzz) and chromium (test/browser).
# Idempotent: a running service is left alone. PostgreSQL: the project's own clusters on 55432 and, for
# the test suites, 55433 (role and database hearth, password hearth; see below); Redis on 6379.
set -euo pipefail

need_apt=()
command -v pg_ctlcluster >/dev/null 2>&1 || need_apt+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
# The venv schemathesis is installed into (make fuzz, test/fuzz/install.sh).
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt+=(python3-venv)
# The browser the CORS browser test drives (test/browser; playwright-core downloads none).
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "services: installing ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
  # The prometheus package is for the tests' own servers (test/observability): its service must not
  # keep the default port.
  if [[ " ${need_apt[*]} " == *" prometheus "* ]]; then
    systemctl disable --now prometheus >/dev/null 2>&1 || service prometheus stop >/dev/null 2>&1 || true
  fi
fi

# PostgreSQL: two clusters of the project's own (Debian clusters, listening on localhost only), each
# with the role and database `hearth` (password `hearth`):
# - `hearth` on $HEARTH_PG_PORT (55432), data under /var/lib/postgresql/<version>/hearth, with
#   PostgreSQL's default settings: for running Hearth on it, `make bench` (beside pgbench) and
#   `make loadtest`;
# - `hearth_test` on $HEARTH_TEST_PG_PORT (55433), the suites' (make test and the other test targets):
#   its data in memory (/dev/shm) and without fsync, since a test's data is thrown away. Each test file
#   copies the migrated template database, about 700 files: on this machine's disk that took 0.4 s of
#   kernel time (creating the files, fsync or not), in memory 0.02 s, and a run copies it about 165
#   times. After a reboot the data is gone, and the cluster is made again here (its template database
#   too, by the next test run). The suites that kill or restart PostgreSQL start their own instance
#   (test/support/own-postgres.ts).
# A PostgreSQL already running (5432 or any other) is never touched: no role, password or setting of it
# changes. Started by hand (`start.conf` manual), so they run only when `make services` (or `make
# test`) wants them.
version=$(ls /usr/lib/postgresql | sort -n | tail -1)
# cluster NAME PORT DATA_DIR [SETTING=VALUE...]: creates (once per machine, or again when its data
# directory is gone) and starts the cluster, with the settings given, and its role and database. An
# empty DATA_DIR is Debian's default place.
cluster() {
  local name=$1 port=$2 data=$3; shift 3
  local options=() setting
  for setting in "$@"; do options+=(-o "$setting"); done
  [[ -n "$data" ]] && options+=(--datadir "$data")
  exists() { pg_lsclusters -h | awk '{print $1" "$2}' | grep -q "^$version $name$"; }
  if exists && [[ -n "$data" && ! -e "$data/PG_VERSION" ]]; then
    echo "services: the PostgreSQL cluster $version/$name lost its data in $data (a reboot empties it); making it again"
    pg_dropcluster "$version" "$name" >/dev/null 2>&1 || true
  fi
  if ! exists; then
    echo "services: creating the PostgreSQL cluster $version/$name on 127.0.0.1:$port${data:+, data in $data}"
    pg_createcluster "$version" "$name" --port "$port" --start-conf manual "${options[@]}" >/dev/null
  fi
  if ! pg_isready -q -h 127.0.0.1 -p "$port"; then
    pg_ctlcluster "$version" "$name" start
    for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p "$port" && break; sleep 0.2; done
  fi
  pg_isready -h 127.0.0.1 -p "$port"
  # The project's role (its own cluster, so a superuser: the tests create and drop their databases)
  # and database, made once; over TCP it signs in with its password.
  in_cluster() { su postgres -c "psql -q -X -p $port -tAc \"$1\""; }
  [ "$(in_cluster "SELECT 1 FROM pg_roles WHERE rolname = 'hearth'")" = 1 ] ||
    in_cluster "CREATE ROLE hearth LOGIN SUPERUSER PASSWORD 'hearth'" >/dev/null
  [ "$(in_cluster "SELECT 1 FROM pg_database WHERE datname = 'hearth'")" = 1 ] ||
    in_cluster "CREATE DATABASE hearth OWNER hearth" >/dev/null
  echo "postgres ($name): postgres://hearth:hearth@127.0.0.1:$port/hearth"
}
cluster hearth "${HEARTH_PG_PORT:-55432}" ''
# In memory where the machine has /dev/shm. full_page_writes and synchronous_commit guard only against a
# crash of the machine, as fsync does; the WAL is kept small, since it is memory too.
test_data=
[[ -d /dev/shm && -w /dev/shm ]] && test_data=/dev/shm/hearth-postgres-test
cluster hearth_test "${HEARTH_TEST_PG_PORT:-55433}" "$test_data" fsync=off full_page_writes=off synchronous_commit=off max_wal_size=256MB

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  redis-server --bind 127.0.0.1 --port 6379 --daemonize yes --save '' --appendonly no >/dev/null
  for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
echo "redis: $(redis-cli -h 127.0.0.1 -p 6379 ping)"
