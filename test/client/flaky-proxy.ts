/**
 * A real HTTP proxy in front of the API that can misbehave on cue, the way a network and a load
 * balancer do: cut the connection after the API acted (the client never hears the answer), answer 503
 * or 429 itself. It records what reached it, so a test sees what the SDK sent and how often.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault = { kind: 'cut-after-forward' } | { kind: 'status'; status: 503 | 429; retryAfter?: number };

export interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The API's status, or the fault's; 0 for a cut connection. */
  status: number;
}

export class FlakyProxy {
  readonly seen: Seen[] = [];
  private readonly faults: Fault[] = [];
  private server?: http.Server;
  base = '';

  constructor(private readonly target: string) {}

  /** The next requests meet these faults, one each, in order. */
  fail(...faults: Fault[]): void {
    this.faults.push(...faults);
  }

  async start(): Promise<this> {
    const target = new URL(this.target);
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const seen: Seen = { method: req.method!, path: req.url!, headers: req.headers, status: 0 };
        this.seen.push(seen);
        const fault = this.faults.shift();
        if (fault?.kind === 'status') {
          seen.status = fault.status;
          const code = fault.status === 429 ? 'rate-limited' : 'unavailable';
          res.writeHead(fault.status, {
            'Content-Type': 'application/json',
            ...(fault.retryAfter !== undefined ? { 'Retry-After': String(fault.retryAfter) } : {}),
          });
          res.end(JSON.stringify({ error: code, message: `the proxy answered ${fault.status}` }));
          return;
        }
        const forwarded = http.request(
          {
            host: target.hostname,
            port: target.port,
            method: req.method,
            path: target.pathname.replace(/\/v1$/, '') + req.url,
            headers: { ...req.headers, host: target.host },
          },
          (answer) => {
            seen.status = answer.statusCode!;
            const body: Buffer[] = [];
            answer.on('data', (c) => body.push(c));
            answer.on('end', () => {
              if (fault?.kind === 'cut-after-forward') {
                seen.status = 0;
                req.socket.destroy();
                return;
              }
              res.writeHead(answer.statusCode!, answer.headers);
              res.end(Buffer.concat(body));
            });
          },
        );
        forwarded.on('error', () => res.destroy());
        forwarded.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
