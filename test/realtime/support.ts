/**
 * Real `ws` clients against real realtime servers, with bounded waits: every wait names what it waits
 * for and fails after a timeout instead of hanging the test.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { createLogger } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import { RedisCoordination } from '@hearth/core/coord';
import { SESSION_EVENTS_CHANNEL } from '@hearth/core/sessions';
import { startRealtimeServer, type RealtimeProcess, type RealtimeServerOptions } from '@hearth/realtime';
import { TEST_REDIS_URL } from '../support/env';
import type { Harness } from '../support/harness';
import { eventually } from '../support/wait';
import { freePort, spawnHearth } from '../cli/run-hearth';

export interface Frame {
  v: number;
  type: string;
  id?: string | number;
  payload?: any;
}

export interface Closed {
  code: number;
  reason: string;
}

export const WAIT_MS = 3000;

export class Client {
  readonly frames: Frame[] = [];
  /** Every frame received, in order (what `next` consumed included). */
  readonly seen: Frame[] = [];
  private waiters: (() => void)[] = [];
  closed: Closed | null = null;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const frame = JSON.parse(data.toString()) as Frame;
      if (isBinary) throw new Error('the server sent a binary frame');
      this.frames.push(frame);
      this.seen.push(frame);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
    ws.on('error', () => undefined);
  }

  static async open(url: string, options: WebSocket.ClientOptions = {}): Promise<Client> {
    const ws = new WebSocket(url, options);
    const client = new Client(ws);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no connection to ${url} within ${WAIT_MS} ms`)), WAIT_MS);
      ws.once('open', () => {
        clearTimeout(timer);
        resolve();
      });
      ws.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    return client;
  }

  /** Opens a socket and authorizes it; answers once `authorized` arrived (session frames may follow). */
  static async authorized(url: string, token: string): Promise<Client> {
    const client = await Client.open(url);
    client.send({ v: 1, type: 'authorize', id: 'auth', payload: { token } });
    const frame = await client.next();
    if (frame.type !== 'authorized') throw new Error(`expected authorized, got ${JSON.stringify(frame)}`);
    return client;
  }

  send(frame: unknown): void {
    this.ws.send(JSON.stringify(frame));
  }

  sendRaw(data: string | Buffer, options: { binary?: boolean } = {}): void {
    this.ws.send(data, options);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private async until<T>(what: string, check: () => T | undefined, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = check();
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}; frames left: ${JSON.stringify(this.frames)}; closed: ${JSON.stringify(this.closed)}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The next frame, in order. */
  next(timeoutMs = WAIT_MS): Promise<Frame> {
    return this.until('a frame', () => this.frames.shift(), timeoutMs);
  }

  /** The first frame that matches, dropping those before it. */
  waitFor(match: (f: Frame) => boolean, what = 'a matching frame', timeoutMs = WAIT_MS): Promise<Frame> {
    return this.until(
      what,
      () => {
        const i = this.frames.findIndex(match);
        if (i < 0) return undefined;
        const [frame] = this.frames.splice(0, i + 1).slice(-1);
        return frame;
      },
      timeoutMs,
    );
  }

  /** The next `session` frame for that session. */
  session(sessionId: string, timeoutMs = WAIT_MS): Promise<Frame> {
    return this.waitFor((f) => f.type === 'session' && f.payload?.session?.id === sessionId, `a session frame of ${sessionId}`, timeoutMs);
  }

  waitClosed(timeoutMs = WAIT_MS): Promise<Closed> {
    return this.until('the socket to close', () => this.closed ?? undefined, timeoutMs);
  }

  /** Every frame the server sent this socket before now has arrived: a ping's pong comes back behind them. */
  async flushed(timeoutMs = WAIT_MS): Promise<void> {
    const payload = randomUUID();
    let ponged = false;
    const onPong = (data: Buffer) => {
      if (data.toString() === payload) ponged = true;
    };
    this.ws.on('pong', onPong);
    try {
      this.ws.ping(Buffer.from(payload));
      await eventually(async () => ponged, timeoutMs, 5);
    } finally {
      this.ws.off('pong', onPong);
    }
  }

  /** Asserts that no frame arrives for a while (and the socket stays open). */
  async quiet(ms = 300): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    expect(this.frames).toEqual([]);
    expect(this.closed).toBeNull();
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
  }
}

export interface RealtimeInstance extends RealtimeProcess {
  core: HearthCore;
  stop(): Promise<void>;
}

/**
 * One realtime process: its own core (caches) and Redis connections over the harness's database and
 * prefix (through `redisUrl` when given: a relay a test can cut).
 */
export async function startRealtime(
  h: Harness,
  { redisUrl = TEST_REDIS_URL, ...options }: Partial<Omit<RealtimeServerOptions, 'core'>> & { redisUrl?: string } = {},
): Promise<RealtimeInstance> {
  const coordination = new RedisCoordination(redisUrl, { prefix: h.redisPrefix });
  const core = new HearthCore({ db: h.db, coordination, masterKey: h.masterKey, logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent') });
  await core.start();
  const proc = await startRealtimeServer({ core, port: 0, host: '127.0.0.1', metricsPort: 0, ...options });
  return {
    ...proc,
    core,
    stop: async () => {
      await proc.close();
      await core.stop();
      await coordination.close();
    },
  };
}

import { sleep } from '../support/wait';

export { sleep };

/**
 * Every message published on the session events channel before now has been handled by the realtime
 * process `rt`: a marker published now reaches a handler the test adds on the process's own
 * subscription after the server's handler has taken every earlier message (one connection, one
 * order, the server's handler first). The server drops the marker as unreadable.
 */
export async function channelHandled(rt: RealtimeInstance, timeoutMs = WAIT_MS): Promise<void> {
  const marker = randomUUID();
  let seen = false;
  const stop = await rt.core.coordination.subscribe(SESSION_EVENTS_CHANNEL, (message) => {
    if (message.includes(marker)) seen = true;
  });
  try {
    await rt.core.coordination.publish(SESSION_EVENTS_CHANNEL, JSON.stringify({ marker }));
    await eventually(async () => seen, timeoutMs, 5);
  } finally {
    await stop();
  }
}

/**
 * One `hearth realtime` process (a real process, to be killed) on a port of its own, over the
 * harness's database and Redis; answers once its readiness probe does. `children` collects it, for the
 * test to kill at the end.
 */
export async function startRealtimeProcess(
  h: Harness,
  children: ChildProcess[],
  withinMs = 10_000,
): Promise<{ child: ChildProcess; port: number; url: string }> {
  const port = await freePort();
  const child = spawnHearth(['realtime'], {
    DATABASE_URL: h.database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: h.redisPrefix,
    HEARTH_MASTER_KEY: h.masterKey.toString('hex'),
    REALTIME_PORT: String(port),
    METRICS_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`hearth realtime exited: ${stderr}`);
      return fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
    },
    withinMs,
    50,
  );
  return { child, port, url: `ws://127.0.0.1:${port}/v1/realtime/socket` };
}
