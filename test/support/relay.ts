/**
 * A TCP relay to the test Redis that can be cut, so that "Redis is down" is real to the client (its
 * connections drop and new ones are refused) while the shared Redis the other tests use keeps running.
 */
import net from 'node:net';
import { TEST_REDIS_URL } from './env';

export class RedisRelay {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  /** Listens on 127.0.0.1 (a given port, to come back on the same one after a cut, or any free one). */
  async open(port = 0): Promise<void> {
    const target = new URL(TEST_REDIS_URL);
    this.server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Stops listening and drops every connection through it. */
  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server!.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}
