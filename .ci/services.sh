#!/usr/bin/env bash
# Installs (when absent) and starts PostgreSQL and Redis on 127.0.0.1 for development and tests, and
# installs Prometheus (promtool and the server the observability tests start on ports of their own)
# and python3-venv (for schemathesis, make fuzz).
# Idempotent: a running service is left alone. Credentials: postgres/postgres on 5432, Redis on 6379.
set -euo pipefail

need_apt=()
command -v pg_ctlcluster >/dev/null 2>&1 || need_apt+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
# The venv schemathesis is installed into (make fuzz, test/fuzz/install.sh).
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need_apt+=(python3-venv)
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

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  version=$(ls /usr/lib/postgresql | sort -n | tail -1)
  if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -q "^$version main$"; then
    pg_createcluster "$version" main >/dev/null
  fi
  pg_ctlcluster "$version" main start
  for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.2; done
fi
pg_isready -h 127.0.0.1 -p 5432
# Password login over TCP for the tests' and examples' DATABASE_URL.
su postgres -c "psql -q -c \"ALTER USER postgres PASSWORD 'postgres'\"" >/dev/null

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  redis-server --bind 127.0.0.1 --port 6379 --daemonize yes --save '' --appendonly no >/dev/null
  for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
echo "redis: $(redis-cli -h 127.0.0.1 -p 6379 ping)"
