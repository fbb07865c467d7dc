#!/usr/bin/env bash
# Installs (once per machine, cached in ~/.cache/hearth/tools, HEARTH_TOOLS_DIR) schemathesis from PyPI
# into a Python venv of its own, for `make fuzz` (test/fuzz/run.ts). A venv already holding the pinned
# version is kept, so later runs cost nothing. Needs python3 with venv (Debian: python3-venv,
# installed by .ci/services.sh).
set -euo pipefail

SCHEMATHESIS_VERSION=4.32.5

tools="${HEARTH_TOOLS_DIR:-$HOME/.cache/hearth/tools}"
venv="$tools/schemathesis"
stamp="$venv/.version"
if [[ -x "$venv/bin/schemathesis" && "$(cat "$stamp" 2>/dev/null)" == "$SCHEMATHESIS_VERSION" ]]; then
  exit 0
fi
echo "installing schemathesis $SCHEMATHESIS_VERSION (once per machine)…" >&2
rm -rf "$venv"
mkdir -p "$tools"
# The first python3 at 3.11.5 or later: 3.11.0-3.11.4 fail inside schemathesis with "AST constructor
# recursion depth mismatch" (CPython gh-106905, fixed in 3.11.5); Debian bookworm's is 3.11.2.
python=""
for candidate in "$(command -v python3 || true)" /usr/bin/python3 /usr/local/bin/python3; do
  [[ -n "$candidate" && -x "$candidate" ]] || continue
  if "$candidate" -c 'import sys; v = sys.version_info; sys.exit(0 if v >= (3, 12) or (3, 11, 5) <= v < (3, 12) else 1)' 2>/dev/null; then
    python="$candidate"; break
  fi
done
if [[ -z "$python" ]]; then
  echo "install.sh: schemathesis needs python3 3.11.5 or later (3.11.0-3.11.4 have CPython gh-106905); found: $(python3 --version 2>&1)" >&2
  exit 1
fi
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
echo "$SCHEMATHESIS_VERSION" > "$stamp"
