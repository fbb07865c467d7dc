import Koa from 'koa';
import Router from '@koa/router';
import { ApiError, HearthCore, randomId, readiness } from '@hearth/core';
import type { AnyRoute } from './route';
import { ApiMetrics } from './metrics';
import { Pipeline, PipelineState, addressChecks, compileRoute } from './pipeline';

export const BASE_PATH = '/v1';
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

export interface ApiAppOptions {
  core: HearthCore;
  routes: AnyRoute[];
  metrics?: ApiMetrics;
  /** Trust X-Forwarded-* from the ingress (client address, host, protocol). */
  trustProxy?: boolean;
}

/** Builds the koa app: every route of the table through the pipeline, under /v1. */
export function createApiApp(options: ApiAppOptions): { app: Koa; metrics: ApiMetrics } {
  const { core, routes } = options;
  const metrics = options.metrics ?? new ApiMetrics();
  const pipeline = new Pipeline(core, metrics);
  // Request ids only need to be unique: a random prefix per app and a counter (no random bytes per request).
  const requestIdPrefix = `${randomId(12)}-`;
  let requestCount = 0;
  const app = new Koa({ proxy: options.trustProxy ?? false });
  app.silent = true;

  // Outermost: request id, the error shape, X-RateLimit headers, metrics and the access log line.
  app.use(async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    const state = ctx.state as PipelineState;
    state.requestId = REQUEST_ID.test(incoming) ? incoming : requestIdPrefix + (++requestCount).toString(36);
    ctx.set('X-Request-Id', state.requestId);
    try {
      await next();
    } catch (err) {
      if (err instanceof ApiError) {
        ctx.status = err.status;
        ctx.body = err.toBody();
        if (err.headers) ctx.set(err.headers);
      } else {
        ctx.status = 500;
        ctx.body = { error: 'internal-error', message: 'Something went wrong on our side; retry with backoff.' };
        core.logger.error({ err, requestId: state.requestId, method: ctx.method, path: ctx.path }, 'request failed');
      }
    }
    if (state.rate) {
      ctx.set('X-RateLimit-Limit', String(state.rate.nearest.limit));
      ctx.set('X-RateLimit-Remaining', String(state.rate.nearest.remaining));
      ctx.set('X-RateLimit-Reset', String(state.rate.nearest.resetSeconds));
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const route = state.routeTemplate ?? 'unmatched';
    const labels = { route, method: ctx.method, status: String(ctx.status) };
    metrics.requests.inc(labels);
    metrics.duration.observe(labels, ms / 1000);
    // The access line: one per request, at error for the 5xx answers (whose cause is logged above).
    const access = { requestId: state.requestId, method: ctx.method, route, status: ctx.status, ms: Math.round(ms * 1000) / 1000 };
    if (ctx.status >= 500) core.logger.error(access, 'request');
    else core.logger.info(access, 'request');
  });

  // Probes live outside /v1: they are for the cluster, not for games.
  app.use(async (ctx, next) => {
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    if (ctx.path === '/readyz') {
      const { ready, postgres, redis } = await readiness(core);
      ctx.status = ready ? 200 : 503;
      ctx.body = { status: ready ? 'ready' : 'not-ready', postgres, redis };
      return;
    }
    await next();
  });

  // Trailing slashes make no difference.
  app.use(async (ctx, next) => {
    if (ctx.path.length > 1 && ctx.path.endsWith('/')) ctx.path = ctx.path.replace(/\/+$/, '') || '/';
    await next();
  });

  const router = new Router({ prefix: BASE_PATH });
  for (const route of routes) {
    router.register(route.path, [route.method], pipeline.middleware(compileRoute(route)), { name: route.operationId });
  }
  app.use(router.routes());

  // Anything the table does not name (a known path with another method included) is 404.
  app.use(async (ctx) => {
    await pipeline.limit(ctx, addressChecks(ctx.ip));
    throw new ApiError('not-found', `No route ${ctx.method} ${ctx.path}.`);
  });

  return { app, metrics };
}
