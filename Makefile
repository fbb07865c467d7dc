# The documented entry points. `make test` is what CI runs after `make services`.
.PHONY: dev services test typecheck lint bench kube-tools operator-test chart-test image-test chart-docs crds build versitygw client sql

# The project's own PostgreSQL clusters (make services): one with PostgreSQL's default settings (bench,
# loadtest), and the suites' own, without fsync (.ci/services.sh says why). DATABASE_URL=… and
# TEST_DATABASE_URL=… use other databases instead.
HEARTH_PG_PORT ?= 55432
HEARTH_TEST_PG_PORT ?= 55433
DATABASE_URL ?= postgres://hearth:hearth@127.0.0.1:$(HEARTH_PG_PORT)/hearth
TEST_DATABASE_URL ?= postgres://hearth:hearth@127.0.0.1:$(HEARTH_TEST_PG_PORT)/hearth
REDIS_URL ?= redis://127.0.0.1:6379

node_modules: package-lock.json
	npm ci --no-audit --no-fund
	@touch node_modules

## Run Hearth locally on the embedded default (embedded PostgreSQL, in-process coordination).
dev: node_modules
	npm start

## Install (when absent) and start the project's own PostgreSQL clusters (localhost:$(HEARTH_PG_PORT), the tests' on $(HEARTH_TEST_PG_PORT)) and Redis on 127.0.0.1.
services:
	HEARTH_PG_PORT=$(HEARTH_PG_PORT) HEARTH_TEST_PG_PORT=$(HEARTH_TEST_PG_PORT) bash .ci/services.sh

# Where a run's jest results go: in this checkout, so two checkouts never read each other's.
TEST_RESULTS ?= $(CURDIR)/.test-results

# jest against the real PostgreSQL and Redis, then a summary of the run: $(call jest,NAME,ARGS).
define jest
	@mkdir -p $(TEST_RESULTS); status=0; TEST_DATABASE_URL=$(TEST_DATABASE_URL) TEST_REDIS_URL=$(REDIS_URL) npx jest --runInBand $(2) \
	  --json --outputFile=$(TEST_RESULTS)/hearth-$(1).json || status=$$?; \
	  node test/support/summary.js $(TEST_RESULTS)/hearth-$(1).json; exit $$status
endef

# The Kubernetes suites run only through their own targets (they need the tools below). The folder
# goes before the flag: jest reads every word after --testPathIgnorePatterns as another pattern.
KUBE_SUITE = --testPathIgnorePatterns /node_modules/

## Type check, then every test against the real PostgreSQL and Redis (started by `make services`),
## versitygw (the S3 server of the storage tests) and helm (test/observability renders the chart's
## rules): built once per machine, the first time about 3 minutes on 2 quiet cores, in the background
## while the suites that need neither run (test/support/make-test.sh; nothing to build once built).
test: node_modules services
	@echo "make test: type check (tsc), then every suite against PostgreSQL and Redis, each said as it ends ('suite N of M')"
	@status=0; TEST_RESULTS=$(TEST_RESULTS) TEST_DATABASE_URL=$(TEST_DATABASE_URL) TEST_REDIS_URL=$(REDIS_URL) \
	  bash test/support/make-test.sh || status=$$?; \
	  node test/support/summary.js $(TEST_RESULTS)/hearth-jest.json; exit $$status

# The tools each target runs, built once per machine into ~/.cache/hearth/tools (HEARTH_TOOLS_DIR) by
# test/kube/tools/build.sh: each target builds only what its tests start.
TOOLS = bash test/kube/tools/build.sh
.PHONY: test-tools operator-tools chart-tools loadtest-tools
test-tools:
	$(TOOLS) versitygw helm
operator-tools:
	$(TOOLS) kube-apiserver etcd kubectl helm
chart-tools:
	$(TOOLS) kube-apiserver kube-controller-manager etcd kubectl helm '*-crds'
loadtest-tools:
	$(TOOLS) k6

## The previous release's `hearth api` on this checkout's schema, over the core routes (test/upgrade;
## docs/operations.md "Upgrades and rollbacks"): the rule that a release's migrations never break the
## code of the release before it. Needs the git history (a shallow clone skips, saying so).
.PHONY: upgrade-test
upgrade-test: node_modules services
	$(call jest,upgrade,test/upgrade $(KUBE_SUITE))

## Rewrite the chart's CRD templates and docs/manifests.md's identity fields and spec fields tables
## from the manifest schemas (a test fails while any differs).
crds: node_modules
	node apps/cli/bin/hearth crds --chart charts/hearth
	node --import tsx test/core/identity-table.ts --write

## The database functions written from a list (the money engine's dispatcher, from MOVE_KINDS).
sql: node_modules
	node --import tsx apps/core/generate-sql.ts

## The SDK's generated types and operation table, from the API's OpenAPI document (apps/client).
client: node_modules
	node --import tsx apps/client/generate.ts

## Build (once per machine, cached in ~/.cache/hearth/tools) versitygw, the S3 server of the storage tests.
versitygw:
	$(TOOLS) versitygw

## Build (once per machine, cached in ~/.cache/hearth/tools) every tool: versitygw, kube-apiserver,
## kube-controller-manager, etcd, kubectl, helm, k6 and the CRDs of the chart's optional objects.
kube-tools:
	$(TOOLS)

## The operator against a real kube-apiserver + etcd, with the API beside it (test/operator).
operator-test: node_modules services operator-tools
	$(call jest,operator,test/operator $(KUBE_SUITE))

## helm lint and template of charts/hearth, the objects dry-run on a real kube-apiserver, and the
## chart installed, upgraded and uninstalled with its hooks on kube-apiserver + kube-controller-manager (test/chart).
chart-test: node_modules services chart-tools
	$(call jest,chart,test/chart $(KUBE_SUITE))

## The Dockerfile built with buildah and run with podman + runc, no Docker engine (test/image): its
## version, then the chart's migrations and API containers (helm template) as a kubelet runs them, on
## the test PostgreSQL and Redis. Needs root; installs those Debian
## packages when absent. About 2 minutes (the first time 4: the base image, npm's cache).
image-test: node_modules services
	$(TOOLS) helm
	$(call jest,image,test/image $(KUBE_SUITE))

## Rewrite the values table of docs/kubernetes.md from charts/hearth/values.yaml.
chart-docs: node_modules
	node --import tsx test/chart/values-table.ts --write

typecheck: node_modules
	npm run typecheck

## typescript-eslint (eslint.config.mjs) over apps/, operator/, test/, then the layers of apps/core
## (dependency-cruiser, .dependency-cruiser.cjs); both must find nothing. See docs/architecture.md "Layers".
lint: node_modules
	npm run lint

## The `hearth` command as plain JavaScript in dist/hearth.js (`node dist/hearth.js <command>`): the image's entry point.
build: node_modules
	npm run build

## Throughput and latency figures (see docs/performance.md).
bench: node_modules services
	TEST_DATABASE_URL=$(DATABASE_URL) TEST_REDIS_URL=$(REDIS_URL) npm run bench
	$(MAKE) --no-print-directory bench-player-search
	$(MAKE) --no-print-directory bench-grant-changes

## GET /players' search over 1,000,000 players (p99 of a 3+ character q under 50 ms; docs/dashboards.md).
.PHONY: bench-player-search
bench-player-search: node_modules services
	TEST_DATABASE_URL=$(DATABASE_URL) node --import tsx test/bench/player-search.ts

## GET /commerce/grants/changes over 1,000,000 changes of one environment (p99 under 20 ms; docs/commerce.md).
.PHONY: bench-grant-changes
bench-grant-changes: node_modules services
	TEST_DATABASE_URL=$(DATABASE_URL) node --import tsx test/bench/grant-changes.ts

## Load tests: the real k6 (built once per machine) against `hearth api` and `hearth realtime` on a fresh
## database; LOADTEST_PROFILE=smoke (CI, under 2 minutes) or full (releases). See docs/performance.md.
.PHONY: loadtest
LOADTEST_PROFILE ?= smoke
loadtest: node_modules services loadtest-tools
	TEST_DATABASE_URL=$(DATABASE_URL) TEST_REDIS_URL=$(REDIS_URL) node --import tsx loadtest/run.ts --profile $(LOADTEST_PROFILE)

## Fuzzing: schemathesis (installed once per machine by fuzz-tools) against a real `hearth api` on a
## fresh database, from its own /v1/openapi.json; fails on any server error or non-conformance.
## See docs/reliability.md.
.PHONY: fuzz fuzz-tools
fuzz-tools:
	bash test/fuzz/install.sh

fuzz: node_modules services fuzz-tools
	TEST_DATABASE_URL=$(TEST_DATABASE_URL) TEST_REDIS_URL=$(REDIS_URL) node --import tsx test/fuzz/run.ts

## Client generators: Redocly and Spectral lint the API's document; seven generators (openapi-typescript,
## @hey-api/openapi-ts, openapi-python-client, datamodel-code-generator, openapi-generator's Java and Rust
## clients, oapi-codegen) must write clients that compile, and six of them call a real API (over the
## services). Tools are cached in ~/.cache/hearth/tools. See docs/api-conventions.md.
.PHONY: openapi-clients
openapi-clients: node_modules services
	TEST_DATABASE_URL=$(TEST_DATABASE_URL) TEST_REDIS_URL=$(REDIS_URL) bash test/openapi-clients/run.sh
