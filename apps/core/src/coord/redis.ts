import type * as IoRedis from 'ioredis';
import type { Redis, RedisOptions } from 'ioredis';
import {
  type CommandObserver,
  type ConnectionObserver,
  type Coordination,
  type RateCheck,
  type RateOutcome,
  type Unsubscribe,
  nearestOf,
  windowOf,
} from './coordination';

/**
 * Rate-limit checks of one batch (the requests of one event-loop turn that share a hash tag), in one
 * round trip. Each request is checked and counted in order, exactly as if each had its own atomic call:
 * a request passes only when none of its counters would pass its limit, and only then counts.
 * KEYS: the distinct counters of the batch (one hash tag, so this runs on Redis Cluster).
 * ARGV: the number of check lists G; per list, its number of checks m and m triples (counter's 1-based
 * index in KEYS, limit, ttl); then, per request in order, the index of its check list.
 * Returns each counter's value before the batch, then per request the refusing check's 1-based index
 * (0 when it passed): enough for the caller to replay every request's counts.
 */
const RATE_LIMIT_BATCH_LUA = `
local counts = {}
local before = redis.call('MGET', unpack(KEYS))
for i = 1, #KEYS do counts[i] = tonumber(before[i] or '0') end
local lists = {}
local p = 2
for g = 1, tonumber(ARGV[1]) do
  local m = tonumber(ARGV[p])
  local list = {}
  for j = 1, m do
    list[j] = { tonumber(ARGV[p + j * 3 - 2]), tonumber(ARGV[p + j * 3 - 1]), ARGV[p + j * 3] }
  end
  lists[g] = list
  p = p + 1 + m * 3
end
local out = {}
for i = 1, #KEYS do out[i] = tonumber(before[i] or '0') end
local ttls = {}
for r = p, #ARGV do
  local list = lists[tonumber(ARGV[r])]
  local refused = 0
  for j = 1, #list do
    if counts[list[j][1]] + 1 > list[j][2] then
      refused = j
      break
    end
  end
  if refused == 0 then
    for j = 1, #list do
      counts[list[j][1]] = counts[list[j][1]] + 1
      ttls[list[j][1]] = list[j][3]
    end
  end
  out[#out + 1] = refused
end
for i = 1, #KEYS do
  local added = counts[i] - out[i]
  if added > 0 and redis.call('INCRBY', KEYS[i], added) == added then redis.call('EXPIRE', KEYS[i], ttls[i]) end
end
return out
`;

/** A check list's counters in the windows of one second: their keys, the list's signature in a batch, its hash tag. */
interface Counters {
  second: number;
  keys: string[];
  /** Seconds until each window restarts. */
  resets: number[];
  /** Equal for equal lists (the same counters and limits): the batch sends such lists once. */
  signature: string;
  tag: string;
}

/** One request's checks waiting for the batch of its event-loop turn. */
interface PendingRateCheck {
  checks: RateCheck[];
  counters: Counters;
  resolve(outcome: RateOutcome): void;
  reject(err: Error): void;
}

const SUBSCRIBE_WAIT_MS = 2000;

/** A connection to Redis. ioredis is loaded by the first one: a command run without REDIS_URL (`hearth get`) never loads it. */
function connectRedis(url: string, options: RedisOptions): Redis {
  const { Redis: Client } = require('ioredis') as typeof IoRedis;
  return new Client(url, options);
}

type RedisWithScript = Redis & { hearthRateLimitBatch(numKeys: number, ...args: (string | number)[]): Promise<number[]> };

export interface RedisCoordinationOptions {
  /** Prepended to every key and channel: lets several deployments (or test files) share one Redis. */
  prefix?: string;
  onError?: (err: Error) => void;
}

/** The `{...}` hash tag a counter's key starts with (all of one request's counters share it). */
function hashTagOf(key: string): string {
  const end = key.indexOf('}');
  return key.startsWith('{') && end > 0 ? key.slice(0, end + 1) : key;
}

export class RedisCoordination implements Coordination {
  private readonly command: RedisWithScript;
  private subscriber?: Redis;
  private handlers = new Map<string, Set<(message: string) => void>>();
  private readonly prefix: string;
  /** Rate-limit checks of the current event-loop turn, by hash tag; sent together at its end. */
  private pendingChecks = new Map<string, PendingRateCheck[]>();
  private flushScheduled = false;
  /** Who hears each command's name, duration and outcome (the processes' metrics). */
  private readonly commandObservers = new Set<CommandObserver>();
  /** Who hears the connections lost and recovered (the processes' metrics and logs). */
  private readonly connectionObservers = new Set<ConnectionObserver>();
  /** Set by close(): the connections we end ourselves are not "lost". */
  private closing = false;

  constructor(
    private readonly url: string,
    private readonly options: RedisCoordinationOptions = {},
  ) {
    this.prefix = options.prefix ?? 'hearth:';
    // Fail fast rather than queue: a rate-limit check that cannot reach Redis fails open (see api pipeline).
    this.command = connectRedis(url, {
      // Rate-limit checks are batched per event-loop turn by this class; auto-pipelining on top costs more than it saves.
      enableAutoPipelining: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
      enableOfflineQueue: true,
      lazyConnect: false,
    }) as RedisWithScript;
    this.command.defineCommand('hearthRateLimitBatch', { lua: RATE_LIMIT_BATCH_LUA });
    this.command.on('error', (err) => options.onError?.(err));
    this.timeCommands(this.command);
    this.watchConnection(this.command, 'command');
  }

  observeConnections(observe: ConnectionObserver): () => void {
    this.connectionObservers.add(observe);
    return () => void this.connectionObservers.delete(observe);
  }

  /**
   * Tells the observers when a connection that was ready closes, and when ioredis has connected it
   * again by itself (its retry strategy reconnects forever; the subscriber then re-sends its
   * SUBSCRIBEs, ioredis's autoResubscribe). A connection that never came up is not "lost".
   */
  private watchConnection(connection: Redis, name: 'command' | 'subscriber'): void {
    let wasReady = false;
    let lost = false;
    const tell = (event: 'lost' | 'recovered') => {
      for (const o of this.connectionObservers) o(name, event);
    };
    connection.on('ready', () => {
      wasReady = true;
      if (!lost) return;
      // The subscriber is back only once Redis has taken its re-sent SUBSCRIBEs: commands of one
      // connection run in order, so a PING answered after `ready` means they are in force (a listener
      // that re-reads what it missed must not read before then). A PING that fails meets the next close.
      const inForce = name === 'subscriber' ? connection.ping() : Promise.resolve('PONG');
      inForce.then(
        () => {
          if (!lost || connection.status !== 'ready') return;
          lost = false;
          tell('recovered');
        },
        () => undefined,
      );
    });
    connection.on('close', () => {
      if (!wasReady || lost || this.closing) return;
      lost = true;
      tell('lost');
    });
  }

  observeCommands(observe: CommandObserver): () => void {
    this.commandObservers.add(observe);
    return () => void this.commandObservers.delete(observe);
  }

  /**
   * Times every command a connection sends (ioredis has no command events): its name is the
   * command's (`evalsha` for the rate-limit script), a closed set the code decides.
   */
  private timeCommands(connection: Redis): void {
    const observers = this.commandObservers;
    const send = connection.sendCommand;
    connection.sendCommand = function (this: Redis, command: Parameters<Redis['sendCommand']>[0], stream?: Parameters<Redis['sendCommand']>[1]) {
      const answer = send.call(this, command, stream);
      if (observers.size > 0) {
        const at = performance.now();
        const name = command.name.toLowerCase();
        const done = (ok: boolean) => () => {
          const seconds = (performance.now() - at) / 1000;
          for (const o of observers) o(name, seconds, ok);
        };
        command.promise.then(done(true), done(false));
      }
      return answer;
    } as Redis['sendCommand'];
  }

  /**
   * Queues the request's checks; every request that asks in the same event-loop turn (under load, the
   * dozens read in one turn) is checked in one Lua call per hash tag, saving a round trip and a
   * command's client-side cost per request. Checks of one request must share one hash tag.
   */
  rateLimit(checks: RateCheck[], nowMs = Date.now()): Promise<RateOutcome> {
    // While disconnected, answer at once so the caller fails open instead of waiting on retries.
    if (this.command.status !== 'ready') return Promise.reject(new Error(`redis is ${this.command.status}`));
    const counters = this.countersOf(checks, nowMs);
    return new Promise((resolve, reject) => {
      let queue = this.pendingChecks.get(counters.tag);
      if (!queue) this.pendingChecks.set(counters.tag, (queue = []));
      queue.push({ checks, counters, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flushChecks);
      }
    });
  }

  /**
   * The counters' keys of a check list in the windows of `nowMs`. A caller that asks with the same list
   * object every time (the API keeps one per credential) has them made once per window, not per request.
   */
  private countersOf(checks: RateCheck[], nowMs: number): Counters {
    const second = Math.floor(nowMs / 1000);
    const kept = this.counters.get(checks);
    if (kept && kept.second === second) return kept;
    const keys: string[] = new Array(checks.length);
    const resets: number[] = new Array(checks.length);
    let signature = '';
    for (let i = 0; i < checks.length; i++) {
      const window = windowOf(nowMs, checks[i].windowSeconds);
      keys[i] = `${this.prefix}rl:${checks[i].key}:${window.start}`;
      resets[i] = window.resetSeconds;
      signature += `${keys[i]} ${checks[i].limit} `;
    }
    const counters = { second, keys, resets, signature, tag: hashTagOf(checks[0].key) };
    this.counters.set(checks, counters);
    return counters;
  }
  private readonly counters = new WeakMap<RateCheck[], Counters>();

  private readonly flushChecks = (): void => {
    this.flushScheduled = false;
    const batches = this.pendingChecks;
    this.pendingChecks = new Map();
    for (const batch of batches.values()) void this.sendBatch(batch);
  };

  private async sendBatch(batch: PendingRateCheck[]): Promise<void> {
    // Requests of one credential share one check list: send each list once, and per request its number.
    const keyIndex = new Map<string, number>();
    const listIndex = new Map<string, number>();
    const lists: (string | number)[] = [];
    const requestLists: number[] = new Array(batch.length);
    const indexesOf: number[][] = [];
    for (let r = 0; r < batch.length; r++) {
      const { checks, counters } = batch[r];
      const { keys, signature } = counters;
      let list = listIndex.get(signature);
      if (list === undefined) {
        listIndex.set(signature, (list = listIndex.size + 1));
        const indexes: number[] = [];
        lists.push(checks.length);
        for (let i = 0; i < checks.length; i++) {
          let index = keyIndex.get(keys[i]);
          if (index === undefined) keyIndex.set(keys[i], (index = keyIndex.size + 1));
          indexes.push(index);
          lists.push(index, checks[i].limit, counters.resets[i] + 1);
        }
        indexesOf.push(indexes);
      }
      requestLists[r] = list;
    }
    let reply: number[];
    try {
      reply = await this.command.hearthRateLimitBatch(keyIndex.size, ...keyIndex.keys(), listIndex.size, ...lists, ...requestLists);
    } catch (err) {
      for (const request of batch) request.reject(err as Error);
      return;
    }
    // Replay the batch as the script ran it: each passing request adds one to each of its counters.
    const counts = reply.slice(0, keyIndex.size).map(Number);
    for (let r = 0; r < batch.length; r++) {
      const {
        checks,
        counters: { resets },
        resolve,
      } = batch[r];
      const indexes = indexesOf[requestLists[r] - 1];
      const refused = Number(reply[keyIndex.size + r]);
      if (refused > 0) {
        const c = checks[refused - 1];
        resolve({ allowed: false, nearest: { name: c.name, limit: c.limit, remaining: 0, resetSeconds: resets[refused - 1] } });
        continue;
      }
      const after = indexes.map((k) => ++counts[k - 1]);
      resolve({ allowed: true, nearest: nearestOf(checks, after, resets) });
    }
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.command.publish(this.prefix + channel, message);
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe> {
    const full = this.prefix + channel;
    if (!this.subscriber) {
      this.subscriber = connectRedis(this.url, { maxRetriesPerRequest: null });
      this.timeCommands(this.subscriber);
      this.watchConnection(this.subscriber, 'subscriber');
      this.subscriber.on('error', (err) => this.options.onError?.(err));
      this.subscriber.on('message', (ch: string, message: string) => {
        for (const handler of this.handlers.get(ch) ?? []) handler(message);
      });
    }
    let set = this.handlers.get(full);
    if (!set) {
      set = new Set();
      this.handlers.set(full, set);
      // Redis down at start must not stop a process from serving (losing Redis loses no data: docs/api-conventions.md):
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
    this.closing = true;
    // QUIT waits for a connection; a client still trying to reach Redis is just dropped.
    const end = async (client?: Redis) => {
      if (client?.status === 'ready') await client.quit();
      else client?.disconnect();
    };
    await Promise.allSettled([end(this.command), end(this.subscriber)]);
  }
}
