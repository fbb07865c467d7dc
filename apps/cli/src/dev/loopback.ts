/** HTTP servers of `hearth dev`'s local services (and the tests' stand-ins) on 127.0.0.1. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts `handler` on 127.0.0.1 at `port` (0: one the kernel picks): the server and its base URL (no trailing slash). */
export async function listenOnLoopback(handler: http.RequestListener, port = 0): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Stops a server, dropping its kept-alive connections first (close alone waits for them); nothing when there is none. */
export async function closeServer(server: http.Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
