import Redis from 'ioredis';
import { Coordination, RateCheck, RateOutcome, Unsubscribe, nearestOf, windowOf } from './coordination';

/**
 * Checks every counter, and only when none would pass its limit increments them all, in one round trip.
 * KEYS: the counters (sharing one hash tag, so this runs on Redis Cluster). ARGV: limit and ttl per key.
 * Returns the refusing key's 1-based index (0 when allowed) followed by every counter's value.
 */
const RATE_LIMIT_LUA = `
local n = #KEYS
local counts = {}
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if counts[i] + 1 > tonumber(ARGV[i * 2 - 1]) then
    local out = { i }
    for j = 1, n do out[j + 1] = counts[j] end
    return out
  end
end
local out = { 0 }
for i = 1, n do
  local v = redis.call('INCR', KEYS[i])
  if v == 1 then redis.call('EXPIRE', KEYS[i], tonumber(ARGV[i * 2])) end
  out[i + 1] = v
end
return out
`;

const SUBSCRIBE_WAIT_MS = 2000;

type RedisWithScript = Redis & { hearthRateLimit(numKeys: number, ...args: (string | number)[]): Promise<number[]> };

export interface RedisCoordinationOptions {
  /** Prepended to every key and channel: lets several deployments (or test files) share one Redis. */
  prefix?: string;
  onError?: (err: Error) => void;
}

export class RedisCoordination implements Coordination {
  private readonly command: RedisWithScript;
  private subscriber?: Redis;
  private handlers = new Map<string, Set<(message: string) => void>>();
  private readonly prefix: string;

  constructor(private readonly url: string, private readonly options: RedisCoordinationOptions = {}) {
    this.prefix = options.prefix ?? 'hearth:';
    // Fail fast rather than queue: a rate-limit check that cannot reach Redis fails open (see api pipeline).
    this.command = new Redis(url, {
      enableAutoPipelining: true,
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
      enableOfflineQueue: true,
      lazyConnect: false,
    }) as RedisWithScript;
    this.command.defineCommand('hearthRateLimit', { lua: RATE_LIMIT_LUA });
    this.command.on('error', (err) => options.onError?.(err));
  }

  async rateLimit(checks: RateCheck[], nowMs = Date.now()): Promise<RateOutcome> {
    // While disconnected, answer at once so the caller fails open instead of waiting on retries.
    if (this.command.status !== 'ready') throw new Error(`redis is ${this.command.status}`);
    const windows = checks.map((c) => windowOf(nowMs, c.windowSeconds));
    const keys = checks.map((c, i) => `${this.prefix}rl:${c.key}:${windows[i].start}`);
    const argv: number[] = [];
    checks.forEach((c, i) => argv.push(c.limit, windows[i].resetSeconds + 1));
    const reply = await this.command.hearthRateLimit(keys.length, ...keys, ...argv);
    const refused = Number(reply[0]);
    const resets = windows.map((w) => w.resetSeconds);
    if (refused > 0) {
      const c = checks[refused - 1];
      return { allowed: false, nearest: { name: c.name, limit: c.limit, remaining: 0, resetSeconds: resets[refused - 1] } };
    }
    return { allowed: true, nearest: nearestOf(checks, reply.slice(1).map(Number), resets) };
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.command.publish(this.prefix + channel, message);
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe> {
    const full = this.prefix + channel;
    if (!this.subscriber) {
      this.subscriber = new Redis(this.url, { maxRetriesPerRequest: null });
      this.subscriber.on('error', (err) => this.options.onError?.(err));
      this.subscriber.on('message', (ch: string, message: string) => {
        for (const handler of this.handlers.get(ch) ?? []) handler(message);
      });
    }
    let set = this.handlers.get(full);
    if (!set) {
      set = new Set();
      this.handlers.set(full, set);
      // Redis down at start must not stop a process from serving (DESIGN: losing Redis loses no data):
      // wait a bounded time; ioredis sends the queued SUBSCRIBE once it connects.
      const subscribed = this.subscriber.subscribe(full);
      subscribed.catch((err: Error) => this.options.onError?.(err));
      await Promise.race([subscribed, new Promise((resolve) => setTimeout(resolve, SUBSCRIBE_WAIT_MS).unref())]);
    }
    set.add(onMessage);
    return async () => {
      const current = this.handlers.get(full);
      if (!current) return;
      current.delete(onMessage);
      if (current.size === 0) {
        this.handlers.delete(full);
        // Offline, UNSUBSCRIBE would wait for Redis; a channel without handlers is harmless meanwhile.
        if (this.subscriber?.status === 'ready') await this.subscriber.unsubscribe(full);
      }
    };
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.command.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // QUIT waits for a connection; a client still trying to reach Redis is just dropped.
    const end = async (client?: Redis) => {
      if (client?.status === 'ready') await client.quit();
      else client?.disconnect();
    };
    await Promise.allSettled([end(this.command), end(this.subscriber)]);
  }
}
