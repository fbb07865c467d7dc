#!/usr/bin/env bash
# `make test`: the type check, then the main jest run (every suite but the Kubernetes ones), its results in
# $TEST_RESULTS/hearth-jest.json. Five suites need versitygw (the S3 server) or helm (test/kube/tools/build.sh
# builds them once per machine, about 3 minutes on two quiet cores the first time). On a machine without them,
# they are built in the background from the start, beside the type check and then the other suites
# (niced, so the build goes first), and the five run as soon as the build is done. With the tools
# built, it is one jest run of everything.
set -uo pipefail
results="${TEST_RESULTS:?TEST_RESULTS names the results folder}"
mkdir -p "$results"
tools=(versitygw helm)
log="$results/tools-build.log"

# The suites that start the S3 server (test/support/s3-gateway.ts) or run helm (test/observability/prometheus.ts).
mapfile -t tool_suites < <(grep -rlE "from '(\.\./support/s3-gateway|\./prometheus)'" test --include='*.test.ts' | grep -vE '^test/(operator|chart)/' | sort)

# With the tools built, suites run in parallel on two jest workers more than there are cores
# (HEARTH_TEST_WORKERS to choose): much of a suite's time is waiting on PostgreSQL, sockets and child
# processes, which leaves its core to another worker. Later runs on 2 quiet cores, same clone, once
# suites and process starts had been made cheaper: 5m19s with 3 workers, 4m47s with 4, 5m24s with 5
# (with 5 the CPU is busy again); 3m57s with 4 once the suites' PostgreSQL was in memory. Every suite
# has a database and a Redis prefix of its own (test/support/harness.ts), and one that restarts
# PostgreSQL or Redis starts its own.
workers="${HEARTH_TEST_WORKERS:-$(($(nproc) + 2))}"

jest() { # jest NAME ARGS...: one run, its results in $results/hearth-NAME.json
  local name=$1; shift
  # The reporters after ARGS: jest's array flags take every word that follows them as another value.
  ${JEST_NICE:-} npx jest "$@" --reporters=default --reporters="$PWD/test/support/progress-reporter.js" --json --outputFile="$results/hearth-$name.json"
}

# The type check (tsc) comes first: a run whose types do not hold starts no suite.
typecheck() { npm run typecheck; }

if bash test/kube/tools/build.sh --check "${tools[@]}"; then
  typecheck || exit $?
  jest jest --maxWorkers="$workers"
  exit $?
fi

side="$results/tools-suites.log"
echo "make test: versitygw (the S3 server) and helm are not built on this machine yet. Building them in the background (Go, from the module proxy; about 3 min on 2 cores, once per machine; log: $log) beside the type check, then while every suite but these ${#tool_suites[@]} runs: ${tool_suites[*]}; those run as soon as the build is done, beside the others (log: $side)"
# The build, then the suites that need it, in the background.
(
  # The build's own words go to its log; a wait for another checkout's build (its lock) is said here too.
  if ! bash test/support/build-tools-logged.sh "$log" "${tools[@]}"; then exit 90; fi
  jest tools --runInBand "${tool_suites[@]}" > "$side" 2>&1
) &
builder=$!
# Stops the build and the suites that wait on it (the whole tree: go and jest are grandchildren) when
# this run ends early.
stop_tree() {
  local child
  for child in $(pgrep -P "$1"); do stop_tree "$child"; done
  kill "$1" 2>/dev/null
}
trap 'stop_tree "$builder"' EXIT
# The type check beside the build's first minutes: tsc keeps one core busy, Go the other.
typecheck || exit $?

# jest's --testPathIgnorePatterns replaces the configured list: it is given whole, package.json's
# patterns (the Kubernetes and image suites) and the tool suites.
mapfile -t ignore < <(node -p 'require("./package.json").jest.testPathIgnorePatterns.map((p) => p.replace("<rootDir>", "")).join("\n")')
for suite in "${tool_suites[@]}"; do ignore+=("/$suite\$"); done
status=0
# The build is the run's longest path (the five suites wait for it): the other suites run on every
# worker, niced, so the build gets the cores first and the suites what it leaves.
JEST_NICE="nice -n 10" jest first --maxWorkers="$workers" --testPathIgnorePatterns "${ignore[@]}" || status=$?

started=$SECONDS
echo "make test: waiting for the versitygw and helm build and the suites that need them…"
side_status=0
wait "$builder" || side_status=$?
trap - EXIT
if [[ $side_status -eq 90 ]]; then
  echo "make test: building versitygw and helm failed; the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
echo "make test: waited $((SECONDS - started)) s for them after the other suites; their run:"
cat "$side"
[[ $side_status -eq 0 ]] || status=$side_status

# One result file for the whole run, as a run with the tools built writes it (.ci/run sums it).
node -e '
  const fs = require("node:fs");
  const [out, ...parts] = process.argv.slice(1);
  const runs = parts.map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
  const sum = (k) => runs.reduce((n, r) => n + r[k], 0);
  const merged = { ...runs[0], success: runs.every((r) => r.success), testResults: runs.flatMap((r) => r.testResults) };
  for (const k of Object.keys(runs[0])) if (typeof runs[0][k] === "number" && k.startsWith("num")) merged[k] = sum(k);
  fs.writeFileSync(out, JSON.stringify(merged));
' "$results/hearth-jest.json" "$results/hearth-first.json" "$results/hearth-tools.json"
exit $status
