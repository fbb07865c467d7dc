/** Bench child: bare koa hello-world (koa 3, a dev dependency), the baseline the issue measures the API against. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { answerCpuQueries } from '../child';

const app = new Koa();
app.use((ctx) => {
  ctx.body = 'Hello World';
});
const callback = app.callback();
const server = http.createServer((req, res) => void callback(req, res));
server.keepAliveTimeout = 65_000; // as the API server sets it

answerCpuQueries();
process.on('message', (message: any) => {
  if (message?.type === 'stop') server.close(() => process.exit(0));
});
server.listen(0, '127.0.0.1', () => {
  process.send!({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
