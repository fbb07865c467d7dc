/** Bench child: bare koa hello-world (koa 3, a dev dependency), the baseline the issues measure the API against. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { answerCpuQueries } from '../child';

/**
 * Answers the bench registers (IPC `answer`): a read's own answer body, sent as kept JSON bytes, to
 * tell what sending that answer costs any server from what the API adds to it. `/` stays hello-world.
 */
const answers = new Map<string, Buffer>();

const app = new Koa();
app.use((ctx) => {
  if (ctx.path === '/') {
    ctx.body = 'Hello World';
    return;
  }
  const answer = answers.get(ctx.path);
  if (!answer) return; // koa's 404
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = answer;
});
const callback = app.callback();
const server = http.createServer((req, res) => void callback(req, res));
server.keepAliveTimeout = 65_000; // as the API server sets it

answerCpuQueries();
process.on('message', (message: any) => {
  if (message?.type === 'stop') server.close(() => process.exit(0));
  if (message?.type === 'answer') {
    answers.set(message.path, Buffer.from(message.body));
    process.send!({ type: 'answer-kept' });
  }
});
server.listen(0, '127.0.0.1', () => {
  process.send!({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
