/**
 * HTTP servers that tests start on 127.0.0.1 (stand-ins for outside services, relays, attackers' hosts),
 * each on a port the kernel picks: one way to start them and one way to stop them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts `handler` on 127.0.0.1: the server and its base URL (no trailing slash). */
export async function listenOnLoopback(handler: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Stops a server, dropping its kept-alive connections first (close alone waits for them); nothing when there is none. */
export async function closeServer(server: http.Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
