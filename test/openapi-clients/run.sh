#!/usr/bin/env bash
# `make openapi-clients`: the client generators API users reach for must generate from /openapi.json
# with no error, and give each shape its type (docs/api-conventions.md "The OpenAPI document"):
#   1. openapi-typescript (npm, a dev dependency): the types compile, and no field is `unknown`
#      except the values of a free-form object (an item's data, a save's value);
#   2. openapi-python-client (PyPI, in a venv of its own): generates without a warning, and the
#      package compiles and imports;
#   3. openapi-generator (its CLI jar, from Maven Central; needs Java 11+ and Maven): a Java client
#      (java.net.http + Jackson) that compiles.
# Tools are installed once per machine into ~/.cache/hearth/tools (HEARTH_TOOLS_DIR); Maven keeps the
# Java client's dependencies in ~/.m2. Output goes to $OUT (default: a temporary folder).
set -euo pipefail

OPENAPI_PYTHON_CLIENT_VERSION=0.29.1
OPENAPI_GENERATOR_VERSION=7.25.0

repo="$(cd "$(dirname "$0")/../.." && pwd)"
tools="${HEARTH_TOOLS_DIR:-$HOME/.cache/hearth/tools}"
# Output goes to $OUT when given (kept, to read); otherwise to a temporary folder removed at the end.
if [[ -n "${OUT:-}" ]]; then
  out="$OUT"
else
  out="$(mktemp -d -t hearth-openapi-clients.XXXXXX)"
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$tools" "$out"
cd "$repo"
step() { echo "== $*" >&2; }

# Java 11+ and Maven for openapi-generator's client: this machine's kind ships them; installed when absent.
if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  echo "installing a JDK and Maven (once per machine)…" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq default-jdk-headless maven >/dev/null
fi

step "the document"
node --import tsx test/openapi-clients/dump.ts > "$out/openapi.json"

# ---------------------------------------------------------------------------------------------
step "openapi-typescript"
npx --no-install openapi-typescript "$out/openapi.json" --output "$out/typescript/schema.d.ts" >&2
node --import tsx test/openapi-clients/typescript-unknowns.ts "$out/typescript/schema.d.ts"
cat > "$out/typescript/tsconfig.json" <<'JSON'
{ "compilerOptions": { "strict": true, "noEmit": true, "skipLibCheck": false }, "files": ["schema.d.ts"] }
JSON
npx --no-install tsc -p "$out/typescript/tsconfig.json"

# ---------------------------------------------------------------------------------------------
step "openapi-python-client $OPENAPI_PYTHON_CLIENT_VERSION"
venv="$tools/openapi-python-client"
if [[ ! -x "$venv/bin/openapi-python-client" || "$(cat "$venv/.version" 2>/dev/null)" != "$OPENAPI_PYTHON_CLIENT_VERSION" ]]; then
  echo "installing openapi-python-client $OPENAPI_PYTHON_CLIENT_VERSION (once per machine)…" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "openapi-python-client==$OPENAPI_PYTHON_CLIENT_VERSION"
  echo "$OPENAPI_PYTHON_CLIENT_VERSION" > "$venv/.version"
fi
rm -rf "$out/python"
# No post hooks: they run ruff, which formats and is no part of what is checked here.
printf 'post_hooks: []\n' > "$out/python-config.yaml"
"$venv/bin/openapi-python-client" generate --path "$out/openapi.json" --output-path "$out/python" --meta none --overwrite --config "$out/python-config.yaml" 2>&1 | tee "$out/python-generate.log" >&2
# It reports what it could not generate as warnings and still succeeds: any warning fails here.
if grep -qiE 'warning|error|unable|could not' "$out/python-generate.log"; then
  echo "openapi-python-client did not generate everything (above)" >&2
  exit 1
fi
"$venv/bin/python" -m compileall -q "$out/python" >&2
(cd "$out" && PYTHONPATH="$out" "$venv/bin/python" -c 'import importlib, pkgutil, python as p; [importlib.import_module(m.name) for m in pkgutil.walk_packages(p.__path__, "python.")]')

# ---------------------------------------------------------------------------------------------
step "openapi-generator $OPENAPI_GENERATOR_VERSION (Java client)"
jar="$tools/openapi-generator-cli-$OPENAPI_GENERATOR_VERSION.jar"
if [[ ! -s "$jar" ]]; then
  echo "fetching openapi-generator-cli $OPENAPI_GENERATOR_VERSION from Maven Central (once per machine)…" >&2
  mvn -q dependency:copy -Dartifact="org.openapitools:openapi-generator-cli:$OPENAPI_GENERATOR_VERSION" -DoutputDirectory="$tools" -Dmdep.stripVersion=false >&2
fi
rm -rf "$out/java"
java -jar "$jar" generate --input-spec "$out/openapi.json" --generator-name java --library native \
  --output "$out/java" --additional-properties=groupId=dev.hearth,artifactId=hearth-client,invokerPackage=dev.hearth.client,apiPackage=dev.hearth.client.api,modelPackage=dev.hearth.client.model \
  --global-property=apiTests=false,modelTests=false,apiDocs=false,modelDocs=false > "$out/java-generate.log" 2>&1 || { cat "$out/java-generate.log" >&2; exit 1; }
(cd "$out/java" && mvn -q -B -DskipTests -Dmaven.javadoc.skip=true compile) >&2
# The large figures are 64-bit there.
grep -q 'private Long balanceAfter' "$out/java/src/main/java/dev/hearth/client/model/Movement.java"

echo "openapi-clients: all three generators took the document${OUT:+ ($OUT)}" >&2
