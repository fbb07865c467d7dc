/**
 * Bench child: the load generator (autocannon's programmatic API), on a core of its own. Runs one
 * phase per `phase` message and answers its figures; latencies are taken from every response
 * (sub-millisecond resolution), and any answer other than the expected status is counted.
 * Keep-alive connections, no HTTP pipelining.
 */
import { randomInt } from 'node:crypto';
import autocannon from 'autocannon';

export interface PhaseJob {
  type: 'phase';
  url: string;
  headers: Record<string, string>;
  connections: number;
  durationSeconds: number;
  /** Requests a second for all connections together; absent: as fast as the server answers. */
  overallRate?: number;
  expectStatus: number;
  /** Other statuses that count as answered as expected (a versioned write's first answer is 201). */
  alsoExpect?: number[];
  /**
   * Versioned save writes: each connection PUTs `body` to a slot of its own (`url` + `-<phase>-<n>`,
   * new in every phase so a write cut at a phase's end cannot desynchronize the next), sending the
   * version its previous answer gave as `expectedVersion` (0 first). The JSON `body` gets the field.
   */
  versionedPut?: { body: Record<string, unknown> };
  /**
   * Idempotent POSTs: each request goes to the next of `paths` (round robin) with `body` and an
   * Idempotency-Key never sent before (so every request acts; none is a replay).
   */
  idempotentPost?: { paths: string[]; body: string };
  /** Plain POSTs of `body` to `url`, no Idempotency-Key (every request acts). */
  post?: { body: string };
}

export interface PhaseResult {
  type: 'phase-result';
  requests: number;
  seconds: number;
  reqPerSec: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Answers with another status than the expected one, by status. */
  unexpected: Record<string, number>;
  errors: number;
  timeouts: number;
  /** Share of its core the loader used (near 1: the loader, not the server, may be the limit). */
  loaderCore: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Latencies of every answer of a phase, in ms, and the answers with another status than expected. */
class Answers {
  latencies = new Float64Array(1 << 18);
  count = 0;
  unexpected: Record<string, number> = {};

  constructor(
    private readonly expectStatus: number,
    private readonly alsoExpect: number[] = [],
  ) {}

  record(statusCode: number, ms: number): void {
    if (statusCode !== this.expectStatus && !this.alsoExpect.includes(statusCode)) this.unexpected[statusCode] = (this.unexpected[statusCode] ?? 0) + 1;
    if (this.count === this.latencies.length) {
      const grown = new Float64Array(this.latencies.length * 2);
      grown.set(this.latencies);
      this.latencies = grown;
    }
    this.latencies[this.count++] = ms;
  }
}

/** One autocannon instance, started after `delayMs`; its answers go to `answers`. */
function cannon(options: autocannon.Options, answers: Answers, delayMs: number): Promise<{ result: autocannon.Result; reqPerSec: number }> {
  return new Promise((resolve, reject) => {
    setTimeout(() => {
      const started = performance.now();
      let answered = 0;
      const instance = autocannon(options, (err, result) =>
        err ? reject(err) : resolve({ result, reqPerSec: answered / ((performance.now() - started) / 1000) }),
      );
      instance.on('response', (_client, statusCode, _bytes, responseTime) => {
        answered++;
        answers.record(statusCode, responseTime);
      });
    }, delayMs);
  });
}

/**
 * As fast as answered: one instance with every connection. At a fixed rate: autocannon gives each
 * connection a budget per second that it spends at once, as fast as the server answers, at the start
 * of the second; one instance would load the server at its peak for 80% of each second and idle the
 * rest. So the rate is split over one instance per connection, started 1/connections s apart: with 50
 * connections the budget is spent in 50 small bursts a second, near a steady rate. (Ten instances, as
 * before, sent bursts of a tenth of a second's requests: where the database is the bottleneck, as for
 * the credits with PostgreSQL on a core of its own, each burst took most of its 100 ms to drain and the
 * p99 measured the bursts: 85 ms, against 20 ms with one instance a connection.)
 */
let phaseCount = 0;

/**
 * Autocannon options for versioned PUTs. Autocannon clears a connection's context before each request,
 * so the slots and their versions live in a free list: a request takes a slot (or makes a new one at
 * version 0) and its answer gives it back at the version answered. A slot whose answer never came
 * (cut at the phase's end) or was not a write is left out, so no two requests ever share a slot.
 */
function versionedPutOptions(job: PhaseJob): Partial<autocannon.Options> {
  const phase = ++phaseCount;
  const path = new URL(job.url).pathname;
  const free: { slot: string; version: number }[] = [];
  let made = 0;
  return {
    method: 'PUT',
    requests: [
      {
        setupRequest: (req: any, context: any) => {
          const taken = free.pop() ?? { slot: `${path}-${phase}-${made++}`, version: 0 };
          context.taken = taken;
          return { ...req, method: 'PUT', path: taken.slot, body: JSON.stringify({ ...job.versionedPut!.body, expectedVersion: taken.version }) };
        },
        onResponse: (status: number, body: string, context: any) => {
          if (status === 200 || status === 201) free.push({ slot: context.taken.slot, version: JSON.parse(body).version });
        },
      },
    ],
  };
}

/**
 * Autocannon options for idempotent POSTs: a new key each request, the paths in turn. A key is a
 * 16-digit number, random in its first ten digits (unique by the request's count in the last six), as
 * pgbench's `\set key random(1, 10^15)` makes them: real clients send random keys (UUIDs), and random
 * keys land anywhere in the records' index while counted ones always at its right edge, which is
 * cheaper for the database; the API and pgbench must pay the same.
 */
function idempotentPostOptions(job: PhaseJob, headers: Record<string, string>): Partial<autocannon.Options> {
  const { paths, body } = job.idempotentPost!;
  let sent = 0;
  return {
    method: 'POST',
    requests: [
      {
        setupRequest: (req: any) => {
          const n = sent++;
          const key = `${randomInt(1e9, 1e10)}${String(n % 1e6).padStart(6, '0')}`;
          return { ...req, method: 'POST', path: paths[n % paths.length], headers: { ...headers, 'Idempotency-Key': key }, body };
        },
      },
    ],
  };
}

async function runPhase(job: PhaseJob): Promise<PhaseResult> {
  const answers = new Answers(job.expectStatus, job.alsoExpect);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const base: autocannon.Options = {
    url: job.url,
    method: 'GET',
    headers: job.headers,
    pipelining: 1,
    duration: job.durationSeconds,
    timeout: 10,
    ...(job.versionedPut ? versionedPutOptions(job) : {}),
    ...(job.idempotentPost ? idempotentPostOptions(job, job.headers) : {}),
    ...(job.post ? { method: 'POST' as const, body: job.post.body } : {}),
  };
  let results: { result: autocannon.Result; reqPerSec: number }[];
  if (job.overallRate === undefined) {
    results = [await cannon({ ...base, connections: job.connections }, answers, 0)];
  } else {
    const instances = job.connections;
    results = await Promise.all(
      Array.from({ length: instances }, (_, i) =>
        cannon(
          {
            ...base,
            connections: Math.floor(job.connections / instances) + (i < job.connections % instances ? 1 : 0),
            overallRate: Math.floor(job.overallRate! / instances) + (i < job.overallRate! % instances ? 1 : 0),
            // Latencies are recorded here, as measured; autocannon's correction assumes a rate in ms.
            ignoreCoordinatedOmission: true,
          },
          answers,
          (i * 1000) / instances,
        ),
      ),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const { count } = answers;
  const sorted = answers.latencies.subarray(0, count).sort();
  return {
    type: 'phase-result',
    requests: count,
    seconds,
    reqPerSec: results.reduce((sum, r) => sum + r.reqPerSec, 0),
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: count > 0 ? sorted[count - 1] : NaN,
    unexpected: answers.unexpected,
    errors: results.reduce((n, r) => n + r.result.errors, 0),
    timeouts: results.reduce((n, r) => n + r.result.timeouts, 0),
    loaderCore: (cpu.user + cpu.system) / 1e6 / seconds,
  };
}

process.on('message', (message: any) => {
  if (message?.type === 'phase') {
    runPhase(message as PhaseJob).then(
      (result) => process.send!(result),
      (err) => process.send!({ type: 'phase-error', message: String(err?.stack ?? err) }),
    );
  }
  if (message?.type === 'stop') process.exit(0);
});
process.send!({ type: 'ready' });
