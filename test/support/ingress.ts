/**
 * A test's ingress: a TCP proxy on 127.0.0.1 in front of a set of backends (hearth processes), as an
 * ingress whose health checks dropped a dead pod would behave. Each new connection goes to a backend
 * that accepts it: the first in the list (`first`), or the next in turn (`round-robin`, so load is
 * spread and a kill cuts requests in flight). A backend that is gone refuses the connection
 * (ECONNREFUSED) and the next is tried; none accepting closes the client's connection. A connection cut
 * on one side is cut on the other, as a dead pod's connections are. `backends` may be changed while it
 * runs (a fresh process added).
 */
import net from 'node:net';

export interface Ingress {
  port: number;
  /** The backend ports, in order; push a fresh process's port to send it connections. */
  backends: number[];
  /** Connections sent to each backend port. */
  connectionsTo: Map<number, number>;
  /** Connections open to each backend port right now. */
  openTo: Map<number, number>;
  close(): Promise<void>;
}

export async function startIngress(backends: number[], choose: 'first' | 'round-robin' = 'first'): Promise<Ingress> {
  const connectionsTo = new Map<number, number>();
  const openTo = new Map<number, number>();
  const open = new Set<net.Socket>();
  let turn = 0;
  const server = net.createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    const start = choose === 'round-robin' ? turn++ : 0;
    const tryBackend = (tried: number) => {
      if (tried >= ingress.backends.length || client.destroyed) return client.destroy();
      const port = ingress.backends[(start + tried) % ingress.backends.length];
      const upstream = net.connect(port, '127.0.0.1');
      upstream.once('error', () => {
        upstream.destroy();
        tryBackend(tried + 1);
      });
      upstream.once('connect', () => {
        connectionsTo.set(port, (connectionsTo.get(port) ?? 0) + 1);
        openTo.set(port, (openTo.get(port) ?? 0) + 1);
        open.add(upstream);
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        upstream.on('close', () => {
          openTo.set(port, openTo.get(port)! - 1);
          open.delete(upstream);
          client.destroy();
        });
        client.on('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    tryBackend(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const ingress: Ingress = {
    port: (server.address() as net.AddressInfo).port,
    backends,
    connectionsTo,
    openTo,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
  return ingress;
}
