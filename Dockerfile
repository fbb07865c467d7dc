# syntax=docker/dockerfile:1
#
# The one Hearth image: the `hearth` command as plain JavaScript (`npm run build`, dist/hearth.js) on
# Node 20, run by `node` alone. The process is chosen by the arguments (the chart passes `api`,
# `realtime`, `operator`, `migrate`, `crash-worker`): `docker run IMAGE api`.
#
# Built and run in CI without a Docker engine (buildah, then podman + runc: test/image/, `make
# image-test`), with NODE_IMAGE naming a base made from Debian packages there.
# docs/kubernetes.md "The image".

# Node 20.19 or later: require() of ES modules (@kubernetes/client-node) without a flag.
ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: every dependency, the bundle, then the production install beside it in /out ----
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.npm \
    npm ci --no-audit --no-fund && npm run build
# /out is /app of the runtime stage: the package files (root and every workspace, so npm lays out
# node_modules as the lockfile says, a workspace's own node_modules included), the production
# dependencies and dist/. No optional packages (the embedded PostgreSQL and the local OpenID Connect
# provider of `hearth dev`, esbuild's binary for tsx: none runs here) and no install scripts (no production package needs one).
# Keep this install alike with PRODUCTION_INSTALL in test/build/bundle.test.ts.
RUN --mount=type=cache,target=/root/.npm \
    set -eu; \
    mkdir -p /out; \
    for file in package.json package-lock.json $(node -p "require('./package.json').workspaces.map((w) => w + '/package.json').join(' ')"); do \
      cp --parents "$file" /out/; \
    done; \
    cp -r dist /out/dist; \
    cd /out && npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

# ---- runtime ----
FROM ${NODE_IMAGE}
# tini as PID 1: forwards SIGTERM to node (the serving commands drain and exit 0 on it; the one-shot
# ones, such as migrate, end at once instead of being ignored as PID 1) and reaps any child.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Owned by root and not writable by the process: a read-only root filesystem changes nothing.
COPY --from=build /out /app
ENV NODE_ENV=production \
    HOME=/tmp
# Any non-root UID works (numeric, for runAsNonRoot); nothing is written outside /tmp.
USER 10001:10001
# API, realtime socket, metrics (PORT, REALTIME_PORT, METRICS_PORT).
EXPOSE 8080 8081 9090
ENTRYPOINT ["/usr/bin/tini", "--", "node", "dist/hearth.js"]
CMD ["--help"]
