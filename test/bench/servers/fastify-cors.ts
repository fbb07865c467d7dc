/**
 * Bench child: fastify 5 with @fastify/cors (dev dependencies), answering the read the `legal-documents-cors`
 * target measures on the API: GET /v1/legal/documents from an allowed Origin, its answer the same JSON
 * bytes (kept, as the API keeps them) with the same CORS headers (the allowed origin given back, Vary,
 * the exposed headers). What a framework with its CORS plugin costs for that answer, without the API's
 * credential, rate limit, ETag, access line or metrics (docs/performance.md "CORS: our pipeline or fastify").
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import cors from '@fastify/cors';
import { BENCH_ORIGIN, answerCpuQueries } from '../child';

/** The bench environment's two legal documents as the API answers them (servers/hearth-api.ts applies them). */
const ANSWER = Buffer.from(
  JSON.stringify({
    items: [
      { document: 'privacy', title: 'Privacy', url: 'https://example.com/privacy', version: '2', required: true },
      { document: 'terms', title: 'Terms of Service', url: 'https://example.com/terms', version: '3', required: true },
    ],
    next: null,
  }),
);

async function main(): Promise<void> {
  const app = Fastify({ logger: false, keepAliveTimeout: 65_000 });
  await app.register(cors, {
    origin: [BENCH_ORIGIN],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-None-Match', 'X-Request-Id'],
    exposedHeaders: ['ETag', 'X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Idempotent-Replayed'],
    maxAge: 7200,
  });
  app.get('/v1/legal/documents', (_req, reply) => {
    void reply.type('application/json; charset=utf-8').send(ANSWER);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  answerCpuQueries();
  process.on('message', (message: any) => {
    if (message?.type === 'stop') void app.close().then(() => process.exit(0));
  });
  process.send!({ type: 'ready', url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
