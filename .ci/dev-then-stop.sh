#!/usr/bin/env bash
# The README's order, as a new user follows it: `make dev`, Ctrl-C, then `make test` (the next stage).
# Starts `make dev` in a process group of its own, waits (at most 5 minutes) until it serves, asks it
# for /readyz, stops it as Ctrl-C does (SIGINT to the group) and checks it took its connection file
# with it, so the commands and tests run after it never reach for a database that is gone.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
setsid make dev > "$log" 2>&1 &
group=$!
stop() { kill -INT -- "-$group" 2>/dev/null || true; wait "$group" 2>/dev/null || true; }
for _ in $(seq 1 300); do
  grep -q 'Hearth is running' "$log" && break
  if ! kill -0 "$group" 2>/dev/null; then cat "$log"; echo "dev-then-stop: make dev exited before serving"; exit 1; fi
  sleep 1
done
if ! grep -q 'Hearth is running' "$log"; then cat "$log"; stop; echo "dev-then-stop: make dev did not serve within 5 minutes"; exit 1; fi
base=$(awk '/base URL/ { print $3 }' "$log")
curl -fsS "${base%/v1}/readyz"; echo
stop
cat "$log"
if [[ -e .hearth/connection.json ]]; then echo "dev-then-stop: .hearth/connection.json was left behind"; exit 1; fi
echo "dev-then-stop: make dev served ${base} and stopped cleanly on Ctrl-C"
