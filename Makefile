# The documented entry points. `make test` is what CI runs after `make services`.
.PHONY: dev services test typecheck bench

DATABASE_URL ?= postgres://postgres:postgres@127.0.0.1:5432/postgres
REDIS_URL ?= redis://127.0.0.1:6379

node_modules: package-lock.json
	npm ci --no-audit --no-fund
	@touch node_modules

## Run Hearth locally on the embedded default (embedded PostgreSQL, in-process coordination).
dev: node_modules
	npm start

## Install (when absent) and start PostgreSQL and Redis on 127.0.0.1.
services:
	bash .ci/services.sh

## Type check, then every test against the real PostgreSQL and Redis (started by `make services`).
test: node_modules services
	npm run typecheck
	@status=0; TEST_DATABASE_URL=$(DATABASE_URL) TEST_REDIS_URL=$(REDIS_URL) npx jest --runInBand \
	  --json --outputFile=$${TMPDIR:-/tmp}/hearth-jest.json || status=$$?; \
	  node test/support/summary.js $${TMPDIR:-/tmp}/hearth-jest.json; exit $$status

typecheck: node_modules
	npm run typecheck

## Throughput and latency figures (see docs/performance.md).
bench: node_modules services
	TEST_DATABASE_URL=$(DATABASE_URL) TEST_REDIS_URL=$(REDIS_URL) npm run bench
