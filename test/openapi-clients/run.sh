#!/usr/bin/env bash
# `make openapi-clients`: what client developers meet (docs/api-conventions.md "The OpenAPI document").
# From /openapi.json:
#   - two linters find nothing: Redocly (`recommended`) and Spectral (`spectral:oas`);
#   - seven generators write clients that compile with no error:
#       openapi-typescript (npm, a dev dependency): strict types, no field `unknown` but the values of
#         a free-form object (an item's data, a save's value);
#       @hey-api/openapi-ts (npm): its fetch client, strict;
#       openapi-python-client (PyPI): generates without a warning, the package compiles and imports;
#       datamodel-code-generator (PyPI): pydantic v2 models that pass `mypy --strict`;
#       openapi-generator (its CLI jar, Maven Central): a Java client (java.net.http + Jackson) and a
#         Rust client (reqwest), the Rust one built with cargo;
#       oapi-codegen (the Go module proxy): a Go client, built with go;
#   - then a real API is started (test/openapi-clients/live-api.ts, the test harness over
#     TEST_DATABASE_URL and TEST_REDIS_URL) and one short program per client (the folders beside this
#     file: go, rust, python, java, typescript, hey-api) calls it: a player's sign-in with the server
#     key, GET /players/me with the player's token, GET /flags then 304 on its ETag, a credit under an
#     Idempotency-Key replayed (same answer, `replayed: true`, credited once), a balance of
#     3,000,000,000 (past 32 bits), and a 400 and a 404 read as the typed Error. Each exits non-zero
#     when an answer is not what the document says.
# Needs Java 11+ and Maven (installed when absent), Go 1.26+ and cargo (on the PATH or in ~/.cargo/bin),
# python3 with venv. Tools are installed once per machine into ~/.cache/hearth/tools (HEARTH_TOOLS_DIR),
# with cargo's registry, its build folder and the Rust crates it builds; Maven keeps the Java client's libraries in ~/.m2 and Go its
# modules and builds in its own caches. Output goes to $OUT (default: a temporary folder).
set -euo pipefail

OPENAPI_PYTHON_CLIENT_VERSION=0.29.1
OPENAPI_GENERATOR_VERSION=7.25.0
OAPI_CODEGEN_VERSION=v2.8.2
# The last release that runs on Node 20 (later ones need Node 22).
HEY_API_VERSION=0.95.0
DATAMODEL_CODE_GENERATOR_VERSION=0.89.0
MYPY_VERSION=2.4.1
PYDANTIC_VERSION=2.14.4
REDOCLY_VERSION=2.77.0
SPECTRAL_VERSION=6.16.3

repo="$(cd "$(dirname "$0")/../.." && pwd)"
here="$repo/test/openapi-clients"
tools="${HEARTH_TOOLS_DIR:-$HOME/.cache/hearth/tools}"
# Output goes to $OUT when given (kept, to read); otherwise to a temporary folder removed at the end.
if [[ -n "${OUT:-}" ]]; then
  out="$OUT"
  keep=1
else
  out="$(mktemp -d -t hearth-openapi-clients.XXXXXX)"
  keep=
fi
api_pid=
cleanup() {
  # The API drops its database when it stops: it is stopped, and waited for, before anything else.
  if [[ -n "$api_pid" ]]; then
    kill "$api_pid" 2>/dev/null || true
    wait "$api_pid" 2>/dev/null || true
  fi
  if [[ -z "$keep" ]]; then rm -rf "$out"; fi
}
trap cleanup EXIT
mkdir -p "$tools" "$out"
cd "$repo"
step() { echo "== $* ($SECONDS s)" >&2; }

# Java 11+ and Maven for openapi-generator's client: this machine's kind ships them; installed when absent.
if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  echo "installing a JDK and Maven (once per machine)…" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq default-jdk-headless maven >/dev/null
fi
[[ -d "$HOME/.cargo/bin" ]] && PATH="$HOME/.cargo/bin:$PATH"
command -v go >/dev/null 2>&1 || { echo "openapi-clients: the Go client needs Go (1.26+) on the PATH" >&2; exit 1; }
command -v cargo >/dev/null 2>&1 || { echo "openapi-clients: the Rust client needs cargo (rustup) on the PATH or in ~/.cargo/bin" >&2; exit 1; }
# cargo's registry and builds stay in the tools folder, so a second run builds only the client.
export CARGO_HOME="$tools/cargo" CARGO_TARGET_DIR="$tools/rust-target"

# npm_tool NAME VERSION PACKAGE...: PACKAGE... installed once into $tools/NAME-VERSION (not the repository's
# dependencies: package-lock.json stays the API's own).
npm_tool() {
  local dir="$tools/$1-$2"; shift 2
  if [[ ! -f "$dir/.installed" ]]; then
    echo "installing $* (once per machine)…" >&2
    rm -rf "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact "$@" >&2
    touch "$dir/.installed"
  fi
}
# python_tool NAME VERSION PACKAGE...: a venv of its own at $tools/NAME, rebuilt when VERSION changes.
python_tool() {
  local venv="$tools/$1" version="$2"; shift 2
  if [[ "$(cat "$venv/.version" 2>/dev/null)" != "$version" ]]; then
    echo "installing $* (once per machine)…" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
    echo "$version" > "$venv/.version"
  fi
}

step "the document"
node --import tsx test/openapi-clients/dump.ts > "$out/openapi.json"

# ---------------------------------------------------------------------------------------------
# Any warning fails. The document's contact and licence are the deployment's (HEARTH_API_CONTACT,
# HEARTH_API_LICENSE); checked here is the default, which names them as the operator's.
step "Redocly $REDOCLY_VERSION (recommended) and Spectral $SPECTRAL_VERSION (spectral:oas)"
npm_tool openapi-lint "$REDOCLY_VERSION-$SPECTRAL_VERSION" "@redocly/cli@$REDOCLY_VERSION" "@stoplight/spectral-cli@$SPECTRAL_VERSION"
lint="$tools/openapi-lint-$REDOCLY_VERSION-$SPECTRAL_VERSION/node_modules/.bin"
REDOCLY_TELEMETRY=off "$lint/redocly" lint --extends recommended --format json "$out/openapi.json" > "$out/redocly.json" 2> "$out/redocly.log" || true
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  for (const p of r.problems) console.error(`redocly ${p.severity} ${p.ruleId}: ${p.message} (${p.location.map((l) => l.pointer).join(", ")})`);
  if (r.problems.length > 0) process.exit(1);' "$out/redocly.json"
printf 'extends: ["spectral:oas"]\n' > "$out/.spectral.yaml"
"$lint/spectral" lint --ruleset "$out/.spectral.yaml" --fail-severity warn "$out/openapi.json" >&2

# ---------------------------------------------------------------------------------------------
step "openapi-typescript"
npx --no-install openapi-typescript "$out/openapi.json" --output "$out/typescript/schema.d.ts" >&2
node --import tsx test/openapi-clients/typescript-unknowns.ts "$out/typescript/schema.d.ts"
# The live programs are .mts, outside the repository's type check (their client exists only here):
# checked with their clients below.
cp "$here/typescript/live.mts" "$out/typescript/"

# ---------------------------------------------------------------------------------------------
step "@hey-api/openapi-ts $HEY_API_VERSION"
npm_tool hey-api "$HEY_API_VERSION" "@hey-api/openapi-ts@$HEY_API_VERSION" typescript@5.9.3
rm -rf "$out/hey-api"
"$tools/hey-api-$HEY_API_VERSION/node_modules/.bin/openapi-ts" --input "$out/openapi.json" --output "$out/hey-api" --client @hey-api/client-fetch --no-log-file > "$out/hey-api-generate.log" 2>&1 || { cat "$out/hey-api-generate.log" >&2; exit 1; }
cp "$here/hey-api/live.mts" "$out/hey-api/"
# Both TypeScript clients and their programs, strict, in one run of tsc.
printf '{ "compilerOptions": { "strict": true, "noEmit": true, "skipLibCheck": false, "target": "ES2022", "module": "ESNext", "moduleResolution": "bundler", "lib": ["ES2023", "DOM"], "types": ["node"], "typeRoots": ["%s"] }, "include": ["typescript/**/*.ts", "typescript/*.mts", "hey-api/**/*.ts", "hey-api/*.mts"] }\n' "$repo/node_modules/@types" > "$out/tsconfig.json"
npx --no-install tsc -p "$out/tsconfig.json"

# ---------------------------------------------------------------------------------------------
step "openapi-python-client $OPENAPI_PYTHON_CLIENT_VERSION"
python_tool openapi-python-client "$OPENAPI_PYTHON_CLIENT_VERSION" "openapi-python-client==$OPENAPI_PYTHON_CLIENT_VERSION"
venv="$tools/openapi-python-client"
rm -rf "$out/python"
# No post hooks: they run ruff, which formats and is no part of what is checked here.
printf 'post_hooks: []\n' > "$out/python-config.yaml"
"$venv/bin/openapi-python-client" generate --path "$out/openapi.json" --output-path "$out/python/hearth_client" --meta none --overwrite --config "$out/python-config.yaml" 2>&1 | tee "$out/python-generate.log" >&2
# It reports what it could not generate as warnings and still succeeds: any warning fails here.
if grep -qiE 'warning|error|unable|could not' "$out/python-generate.log"; then
  echo "openapi-python-client did not generate everything (above)" >&2
  exit 1
fi
"$venv/bin/python" -m compileall -q "$out/python" >&2
(cd "$out/python" && "$venv/bin/python" -c 'import importlib, pkgutil, hearth_client as p; [importlib.import_module(m.name) for m in pkgutil.walk_packages(p.__path__, "hearth_client.")]')

# ---------------------------------------------------------------------------------------------
step "datamodel-code-generator $DATAMODEL_CODE_GENERATOR_VERSION (pydantic v2, mypy --strict)"
python_tool datamodel-code-generator "$DATAMODEL_CODE_GENERATOR_VERSION-$MYPY_VERSION-$PYDANTIC_VERSION" \
  "datamodel-code-generator==$DATAMODEL_CODE_GENERATOR_VERSION" "mypy==$MYPY_VERSION" "pydantic==$PYDANTIC_VERSION"
dmcg="$tools/datamodel-code-generator"
mkdir -p "$out/datamodel"
# Constraints as Field(...) inside Annotated (not conint(...), which mypy refuses as a type).
"$dmcg/bin/datamodel-codegen" --input "$out/openapi.json" --input-file-type openapi --output "$out/datamodel/hearth_models.py" \
  --output-model-type pydantic_v2.BaseModel --target-python-version 3.11 --field-constraints --use-annotated --formatters builtin \
  > "$out/datamodel-generate.log" 2>&1 || { cat "$out/datamodel-generate.log" >&2; exit 1; }
if [[ -s "$out/datamodel-generate.log" ]]; then cat "$out/datamodel-generate.log" >&2; echo "datamodel-code-generator warned (above)" >&2; exit 1; fi
(cd "$out/datamodel" && "$dmcg/bin/mypy" --strict --no-incremental hearth_models.py >&2)

# ---------------------------------------------------------------------------------------------
jar="$tools/openapi-generator-cli-$OPENAPI_GENERATOR_VERSION.jar"
if [[ ! -s "$jar" ]]; then
  echo "fetching openapi-generator-cli $OPENAPI_GENERATOR_VERSION from Maven Central (once per machine)…" >&2
  mvn -q dependency:copy -Dartifact="org.openapitools:openapi-generator-cli:$OPENAPI_GENERATOR_VERSION" -DoutputDirectory="$tools" -Dmdep.stripVersion=false >&2
fi
step "openapi-generator $OPENAPI_GENERATOR_VERSION (Java client, Rust client)"
# Both in one run of the jar (one JVM, a thread each). Rust: supportMultipleResponses, so that each
# answer carries its status (without it a 304, which has no body, is a JSON error).
no_tests_or_docs='"globalProperties": { "apiTests": "false", "modelTests": "false", "apiDocs": "false", "modelDocs": "false" }'
cat > "$out/openapi-generator-java.json" <<JSON
{ "generatorName": "java", "library": "native", "inputSpec": "$out/openapi.json", "outputDir": "$out/java", $no_tests_or_docs,
  "additionalProperties": { "groupId": "dev.hearth", "artifactId": "hearth-client", "invokerPackage": "dev.hearth.client", "apiPackage": "dev.hearth.client.api", "modelPackage": "dev.hearth.client.model" } }
JSON
cat > "$out/openapi-generator-rust.json" <<JSON
{ "generatorName": "rust", "inputSpec": "$out/openapi.json", "outputDir": "$out/rust", $no_tests_or_docs,
  "additionalProperties": { "packageName": "hearth_client", "supportMultipleResponses": true } }
JSON
rm -rf "$out/java" "$out/rust"
java -jar "$jar" batch --fail-fast --threads 2 "$out/openapi-generator-java.json" "$out/openapi-generator-rust.json" > "$out/openapi-generator.log" 2>&1 || { cat "$out/openapi-generator.log" >&2; exit 1; }
(cd "$out/java" && mvn -q -B -DskipTests -Dmaven.javadoc.skip=true compile dependency:build-classpath -Dmdep.outputFile=classpath.txt) > "$out/java-build.log" 2>&1 || { cat "$out/java-build.log" >&2; exit 1; }
# The large figures are 64-bit there.
grep -q 'private Long balanceAfter' "$out/java/src/main/java/dev/hearth/client/model/Movement.java"
step "cargo build (the Rust client and its program)"
mkdir -p "$out/rust-live" && cp -r "$here/rust/Cargo.toml" "$here/rust/Cargo.lock" "$here/rust/src" "$out/rust-live/"
# Built from one folder of the tools, not from $out: cargo keeps a build per path (about 300 MB each,
# a new one every run from a new temporary folder), and a folder copied only when its files differ
# keeps their times, so an unchanged client is not built again. One run at a time builds there.
rust_work="$tools/rust-work"
(
  flock 9
  for crate in rust rust-live; do
    diff -rq "$out/$crate" "$rust_work/$crate" >/dev/null 2>&1 || { rm -rf "${rust_work:?}/$crate"; mkdir -p "$rust_work"; cp -r "$out/$crate" "$rust_work/$crate"; }
  done
  (cd "$rust_work/rust-live" && cargo build --quiet)
  cp "$CARGO_TARGET_DIR/debug/hearth-live" "$out/rust-live/hearth-live"
) 9> "$tools/rust-work.lock"
rust_live="$out/rust-live/hearth-live"

step "oapi-codegen $OAPI_CODEGEN_VERSION (Go client)"
oapi_codegen="$tools/oapi-codegen-$OAPI_CODEGEN_VERSION/oapi-codegen"
if [[ ! -x "$oapi_codegen" ]]; then
  echo "installing oapi-codegen $OAPI_CODEGEN_VERSION from the Go module proxy (once per machine)…" >&2
  GOBIN="$(dirname "$oapi_codegen")" GOFLAGS=-buildvcs=false go install "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@$OAPI_CODEGEN_VERSION"
fi
rm -rf "$out/go" && mkdir -p "$out/go/hearth"
cp "$here/go/main.go" "$here/go/go.mod" "$here/go/go.sum" "$out/go/"
printf 'package: hearth\ngenerate:\n  models: true\n  client: true\noutput: %s\n' "$out/go/hearth/hearth.gen.go" > "$out/go/oapi-codegen.yaml"
"$oapi_codegen" -config "$out/go/oapi-codegen.yaml" "$out/openapi.json" >&2
# -trimpath: the build cache serves the same client again from another temporary folder.
(cd "$out/go" && go build -trimpath -o live .) >&2

# ---------------------------------------------------------------------------------------------
step "live calls"
node --import tsx test/openapi-clients/live-api.ts > "$out/live-api.json" 2> "$out/live-api.log" &
api_pid=$!
for _ in $(seq 1 300); do
  [[ -s "$out/live-api.json" ]] && break
  kill -0 "$api_pid" 2>/dev/null || { cat "$out/live-api.log" >&2; echo "openapi-clients: the API did not start" >&2; exit 1; }
  sleep 0.2
done
[[ -s "$out/live-api.json" ]] || { echo "openapi-clients: the API did not start within a minute" >&2; exit 1; }
read_field() { node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))[process.argv[2]])' "$out/live-api.json" "$1"; }
HEARTH_BASE="$(read_field base)" HEARTH_SERVER_KEY="$(read_field serverKey)" HEARTH_CURRENCY="$(read_field currencyKey)"
export HEARTH_BASE HEARTH_SERVER_KEY HEARTH_CURRENCY

"$out/go/live"
"$rust_live"
PYTHONPATH="$out/python" "$venv/bin/python" "$here/python/live.py"
java -cp "$out/java/target/classes:$(cat "$out/java/classpath.txt")" "$here/java/Live.java"
node --import tsx "$out/typescript/live.mts"
node --import tsx "$out/hey-api/live.mts"

echo "openapi-clients: two linters and seven generators took the document; six clients called the API${OUT:+ ($OUT)}" >&2
