#!/usr/bin/env bash
# `make test`'s background build of the tools (test/kube/tools/build.sh TOOLS...): its own words go to
# LOG only, but a wait for another checkout's build (the tools folder's lock) and the end of that wait
# are said on the console (stderr) too, so a run that seems to hang says why.
#   build-tools-logged.sh LOG TOOL...
set -uo pipefail
log="${1:?the log file}"; shift
here="$(cd "$(dirname "$0")" && pwd)"
status=0
bash "$here/../kube/tools/build.sh" "$@" > "$log" 2> >(tee -a "$log" | grep --line-buffered -E 'waiting for it|the other build is done' | sed -u 's/^/make test: /' >&2) || status=$?
# The console's copy comes from a process substitution: let it say its last line before going on.
wait
exit $status
