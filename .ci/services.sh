#!/usr/bin/env bash
# Installs (when absent) and starts PostgreSQL and Redis on 127.0.0.1 for development and tests, and
# installs Prometheus (promtool and the server the observability tests start on ports of their own),
# python3-venv (for schemathesis, make fuzz) and chromium (test/browser).
# Idempotent: a running service is left alone. PostgreSQL: the project's own cluster on 55432 (role and
# database hearth, password hearth; see below); Redis on 6379.
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

# PostgreSQL: a cluster of the project's own (Debian's cluster `hearth`, data under
# /var/lib/postgresql/<version>/hearth, listening on localhost only) on port $HEARTH_PG_PORT (55432), with the role and
# database `hearth` (password `hearth`). A PostgreSQL already running (5432 or any other) is never
# touched: no role, password or setting of it changes. Started by hand (`start.conf` manual), so it
# runs only when `make services` (or `make test`) wants it.
pg_port="${HEARTH_PG_PORT:-55432}"
version=$(ls /usr/lib/postgresql | sort -n | tail -1)
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -q "^$version hearth$"; then
  echo "services: creating the PostgreSQL cluster $version/hearth on 127.0.0.1:$pg_port (once per machine)"
  pg_createcluster "$version" hearth --port "$pg_port" --start-conf manual >/dev/null
fi
if ! pg_isready -q -h 127.0.0.1 -p "$pg_port"; then
  pg_ctlcluster "$version" hearth start
  for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p "$pg_port" && break; sleep 0.2; done
fi
pg_isready -h 127.0.0.1 -p "$pg_port"
# The project's role (its own cluster, so a superuser: the tests create and drop their databases)
# and database, made once; over TCP it signs in with its password.
in_cluster() { su postgres -c "psql -q -X -p $pg_port -tAc \"$1\""; }
[ "$(in_cluster "SELECT 1 FROM pg_roles WHERE rolname = 'hearth'")" = 1 ] ||
  in_cluster "CREATE ROLE hearth LOGIN SUPERUSER PASSWORD 'hearth'" >/dev/null
[ "$(in_cluster "SELECT 1 FROM pg_database WHERE datname = 'hearth'")" = 1 ] ||
  in_cluster "CREATE DATABASE hearth OWNER hearth" >/dev/null
echo "postgres: postgres://hearth:hearth@127.0.0.1:$pg_port/hearth"

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  redis-server --bind 127.0.0.1 --port 6379 --daemonize yes --save '' --appendonly no >/dev/null
  for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
echo "redis: $(redis-cli -h 127.0.0.1 -p 6379 ping)"
