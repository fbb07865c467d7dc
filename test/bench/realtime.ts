/**
 * The realtime bench: `node --import tsx test/bench/realtime.ts` (needs PostgreSQL and Redis, as the
 * tests do: TEST_DATABASE_URL / TEST_REDIS_URL).
 *
 * 1. Sockets: two realtime processes (children, `--expose-gc`, each on its own port, as two pods behind
 *    the ingress would be) hold BENCH_SOCKETS idle authorized sockets together (default 39,600: one
 *    process holds at most ~19,800 here, the open-file hard limit being 20,000), player i on process
 *    i mod 2, opened by loader children from several source addresses (127.0.0.1..N) so the ephemeral
 *    ports of one address pair do not run out.
 * 2. Memory: each realtime process's RSS and heap after a forced GC, before and after, per socket it holds. RSS
 *    also counts V8's heap pages that no object uses (the young generation grown by the burst of
 *    connections, old-space pages left part-empty): that slack is reported apart, and the RSS the
 *    sockets hold is RSS less it. Measured once the authorize deadlines have passed, so the FIFO of
 *    sockets awaiting authorize is empty again.
 * 3. Latency: 100 sessions of 8 seats made and readied through the HTTP API while every socket is held,
 *    each session's seats on both processes (half each), so every change reaches its seats through the
 *    Redis fan-out to both; from sending each create, join and ready request to every seat's `session` frame, p50 / p99, and
 *    from the API's commit to the frame (the realtime path alone). Two passes: one request at a time,
 *    then 10 sessions at a time.
 * Prints people-readable lines, then one `BENCH_JSON {...}` line for test/bench/run.ts.
 *
 * This one file is all three roles: the bench itself, `realtime.ts server` and `realtime.ts loader`.
 *
 * Settings: BENCH_SOCKETS (39600; e.g. 4000 for a quick run), BENCH_ACTION_CONCURRENCY (10 sessions at a time in the second
 * pass), BENCH_HEARTBEAT_MS (the server's default, 30 s), BENCH_SNAPSHOTS=1 (writes heap snapshots of
 * each realtime process before and after the sockets to /tmp/rt<n>-before|after.heapsnapshot).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import v8 from 'node:v8';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import { createLogger } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import { RedisCoordination } from '@hearth/core/coord';
import { SESSION_EVENTS_CHANNEL, type SessionEvent } from '@hearth/core/sessions';
import { createDb } from '@hearth/core/db';
import { AUTHORIZE_TIMEOUT_MS, startRealtimeServer } from '@hearth/realtime';
import globalSetup from '../support/global-setup';
import { startHarness } from '../support/harness';
import { environment, plan, project, serverKey } from '../support/manifests';
import { TEST_REDIS_URL } from '../support/env';
import { call } from '../support/http';
import type { Verdict } from './report';

const TARGET_SOCKETS = Number(process.env.BENCH_SOCKETS ?? 39_600);
/** Realtime processes sharing the sockets, as pods behind the ingress: the sessions' events reach each through Redis. */
const PROCESSES = 2;
/** The issue's horizontal goal: sockets the processes hold together. */
const GOAL_SOCKETS = 39_000;
const SESSIONS = 100;
const SEATS = 8;
const ACTION_CONCURRENCY = Number(process.env.BENCH_ACTION_CONCURRENCY ?? 10);
const SOURCE_ADDRESSES = 4;
const SOCKETS_PER_LOADER = 10_000;
const CONNECT_CONCURRENCY_PER_LOADER = 128;
/** File descriptors the realtime process needs besides sockets (database pool, Redis, listeners, node's own). */
const FD_RESERVE = 200;
const APP_KEY = 'bench-live';

const now = () => performance.timeOrigin + performance.now();
const log = (line: string) => process.stdout.write(line + '\n');

/**
 * Names a session's state in the bench's script, where each request adds one seat (j<players>) or one
 * ready flag (r<ready>): so a frame, an event and the request that caused them share a key.
 */
function stateKey(session: { id: string; players: { isReady: boolean }[] }): string {
  const ready = session.players.filter((p) => p.isReady).length;
  return ready === 0 ? `${session.id}|j${session.players.length}` : `${session.id}|r${ready}`;
}

// ---- IPC helpers -----------------------------------------------------------------------------------

interface Kid {
  proc: ChildProcess;
  next<T = any>(type: string, timeoutMs?: number): Promise<T>;
  send(message: unknown): void;
}

function wrap(proc: ChildProcess, name: string): Kid {
  const inbox: any[] = [];
  const waiters: { type: string; resolve: (m: any) => void; reject: (e: Error) => void }[] = [];
  let gone: Error | null = null;
  proc.on('message', (m: any) => {
    const i = waiters.findIndex((w) => w.type === m?.type);
    if (i >= 0) waiters.splice(i, 1)[0].resolve(m);
    else inbox.push(m);
  });
  proc.on('exit', (code, signal) => {
    gone = new Error(`${name} exited (code ${code}, signal ${signal})`);
    for (const w of waiters.splice(0)) w.reject(gone);
  });
  return {
    proc,
    send: (m) => proc.send(m as never),
    next: (type, timeoutMs = 180_000) =>
      new Promise((resolve, reject) => {
        const i = inbox.findIndex((m) => m?.type === type);
        if (i >= 0) return resolve(inbox.splice(i, 1)[0]);
        if (gone) return reject(gone);
        const timer = setTimeout(() => reject(new Error(`${name}: no '${type}' within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          type,
          resolve: (m) => (clearTimeout(timer), resolve(m)),
          reject: (e) => (clearTimeout(timer), reject(e)),
        });
      }),
  };
}

function limitsOf(): { soft: number; hard: number } {
  const read = (flag: string) => Number(spawnSync('sh', ['-c', `ulimit ${flag}`], { encoding: 'utf8' }).stdout.trim());
  const hard = spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim();
  return { soft: read('-n'), hard: hard === 'unlimited' ? Infinity : Number(hard) };
}

/** Starts this script in a role, with an IPC channel and as many open files as the hard limit allows. */
function startRole(role: string, env: Record<string, string>, nofile: number, nodeArgs: string[] = []): Kid {
  const args = [...nodeArgs, '--import', 'tsx', __filename, role];
  // `ulimit -n` in a shell, then exec node: the IPC channel's descriptor survives the exec.
  const proc = spawn('sh', ['-c', `ulimit -n ${nofile} 2>/dev/null || true; exec "$0" "$@"`, process.execPath, ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
  return wrap(proc, `realtime.ts ${role}`);
}

// ---- role: the realtime server ---------------------------------------------------------------------

async function serverRole(): Promise<void> {
  const db = createDb(process.env.BENCH_DATABASE_URL!, 10);
  const coordination = new RedisCoordination(process.env.BENCH_REDIS_URL!, { prefix: process.env.BENCH_REDIS_PREFIX });
  const core = new HearthCore({ db, coordination, masterKey: Buffer.from(process.env.BENCH_MASTER_KEY!, 'hex'), logger: createLogger('warn') });
  await core.start();
  const heartbeatMs = process.env.BENCH_HEARTBEAT_MS ? Number(process.env.BENCH_HEARTBEAT_MS) : undefined;
  // The loaders open every socket from SOURCE_ADDRESSES addresses within a minute or so: far past the
  // per-address limit on upgrades (600 a minute), which the bench is not about. Each upgrade is still counted.
  const rt = await startRealtimeServer({ core, port: 0, host: '127.0.0.1', metricsPort: null, heartbeatMs, addressLimitPerMinute: 1_000_000_000 });
  // Stalls of the event loop (GC, heartbeat slices) are what a seat's frame would wait behind.
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  const gc = (globalThis as { gc?: () => void }).gc!;
  const memory = () => {
    for (let i = 0; i < 3; i++) gc();
    const spaces = v8.getHeapSpaceStatistics();
    const heapPhysical = spaces.reduce((n, s) => n + s.physical_space_size, 0);
    const heapObjects = spaces.reduce((n, s) => n + s.space_used_size, 0);
    return { ...process.memoryUsage(), heapSlack: heapPhysical - heapObjects, stats: rt.realtime.stats() };
  };
  process.on(
    'message',
    (m: any) =>
      void (async () => {
        if (m?.type === 'measure') process.send!({ type: 'memory', ...memory() });
        if (m?.type === 'loop-start') {
          loopDelay.reset();
          loopDelay.enable();
        }
        if (m?.type === 'loop') {
          loopDelay.disable();
          const ms = (ns: number) => +(ns / 1e6).toFixed(1);
          process.send!({ type: 'loop', p50Ms: ms(loopDelay.percentile(50)), p99Ms: ms(loopDelay.percentile(99)), maxMs: ms(loopDelay.max) });
        }
        if (m?.type === 'snapshot') {
          for (let i = 0; i < 3; i++) gc();
          const file = v8.writeHeapSnapshot(m.file);
          process.send!({ type: 'snapshot', file });
        }
        if (m?.type === 'stop') {
          await rt.close();
          await core.stop();
          await coordination.close();
          await db.destroy();
          process.exit(0);
        }
      })(),
  );
  process.send!({ type: 'ready', url: rt.url });
}

// ---- role: a loader holding sockets ----------------------------------------------------------------

async function loaderRole(): Promise<void> {
  const sockets: WebSocket[] = [];
  /** Sockets held on each realtime process (by index in `urls`). */
  const heldBy: number[] = [];
  /** `session` frames seen, by stateKey → receive times. */
  const received = new Map<string, number[]>();

  const open = (url: string, urlIndex: number, token: string, localAddress: string) =>
    new Promise<boolean>((resolve) => {
      const ws = new WebSocket(url, { localAddress, perMessageDeflate: false });
      let done = false;
      const finish = (ok: boolean) => {
        if (done) return;
        done = true;
        resolve(ok);
      };
      ws.on('open', () => ws.send(JSON.stringify({ v: 1, type: 'authorize', payload: { token } })));
      ws.on('message', (data) => {
        const at = now();
        const frame = JSON.parse(data.toString());
        if (frame.type === 'authorized') {
          sockets.push(ws);
          heldBy[urlIndex] = (heldBy[urlIndex] ?? 0) + 1;
          finish(true);
        } else if (frame.type === 'session') {
          const key = stateKey(frame.payload.session);
          const list = received.get(key);
          if (list) list.push(at);
          else received.set(key, [at]);
        } else if (frame.type === 'error') finish(false);
      });
      ws.on('error', () => finish(false));
      ws.on('close', () => finish(false));
    });

  process.on(
    'message',
    (m: any) =>
      void (async () => {
        if (m?.type === 'connect') {
          const started = now();
          let next = 0;
          let failed = 0;
          const worker = async () => {
            while (next < m.tokens.length) {
              const i = next++;
              // Player `offset + i` goes to process (offset + i) mod N: a session's seats land on every process.
              const u = (m.offset + i) % m.urls.length;
              if (!(await open(m.urls[u], u, m.tokens[i], m.addresses[i % m.addresses.length]))) failed++;
            }
          };
          await Promise.all(Array.from({ length: m.concurrency }, worker));
          process.send!({ type: 'connected', held: sockets.length, heldBy, failed, seconds: (now() - started) / 1000 });
        }
        if (m?.type === 'samples') process.send!({ type: 'samples', received: [...received.entries()] });
        if (m?.type === 'stop') {
          for (const ws of sockets) ws.terminate();
          process.exit(0);
        }
      })(),
  );
  process.send!({ type: 'ready' });
}

// ---- the bench -------------------------------------------------------------------------------------

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function bench(): Promise<void> {
  const began = Date.now();
  await globalSetup();
  const h = await startHarness({
    manifests: [
      plan('bench', {
        playersPerEnvironment: 1_000_000,
        requestsPerMinutePerEnvironment: 10_000_000,
        requestsPerMinutePerCredential: 10_000_000,
        requestsPerDayPerEnvironment: 100_000_000,
        sessionSeats: SEATS,
        realtime: { maxMessageBytes: 4096, messagesPerSecond: 10, messagesPerMinute: 300, maxSubscriptions: 10 },
      }),
      project('bench', { plan: 'bench', sessionSeats: SEATS }),
      environment(APP_KEY, 'bench'),
      serverKey('bench-key', APP_KEY),
    ],
  });
  const kids: Kid[] = [];
  try {
    // How many sockets one process can hold here: its open-file limit, as far as it can be raised. The
    // sockets are shared by PROCESSES realtime processes, as pods behind the ingress share them.
    const limits = limitsOf();
    const perProcessLimit = limits.hard - FD_RESERVE;
    const sockets = Math.max(2 * SESSIONS * SEATS, Math.min(TARGET_SOCKETS, PROCESSES * perProcessLimit));
    const perProcess = Math.ceil(sockets / PROCESSES);
    const nofile = Math.min(limits.hard, perProcess + FD_RESERVE + 1000);
    const limitedBy = sockets < TARGET_SOCKETS ? `the open-file limit (hard ${limits.hard} a process)` : null;
    log(
      `realtime bench: ${sockets} sockets over ${PROCESSES} realtime processes (target ${TARGET_SOCKETS}${limitedBy ? `, held to ${limitedBy}` : ''}), ${SESSIONS} sessions of ${SEATS} seats`,
    );

    // Players straight into the database; tokens from the service's own TokenService.
    const env = await h.db('environments').where({ app_key: APP_KEY }).first('id');
    const ids = Array.from({ length: sockets }, (_, i) => `bench-${i}`);
    for (let i = 0; i < ids.length; i += 5000) {
      await h.db('players').insert(ids.slice(i, i + 5000).map((id) => ({ id, environment_id: env.id, display_name: `P${id.slice(6)}` })));
    }
    let t = now();
    const tokens: string[] = new Array(sockets);
    for (let i = 0; i < ids.length; i += 1000) {
      const batch = await Promise.all(ids.slice(i, i + 1000).map((id) => h.core.tokens.issue(id, APP_KEY)));
      batch.forEach((b, j) => (tokens[i + j] = b.accessToken));
    }
    log(`  ${sockets} players and tokens made in ${((now() - t) / 1000).toFixed(1)} s`);

    // The realtime processes, and their memory with no sockets (after a warm-up, so code and caches are in).
    const servers = Array.from({ length: PROCESSES }, () =>
      startRole(
        'server',
        {
          BENCH_DATABASE_URL: h.database.url,
          BENCH_REDIS_URL: TEST_REDIS_URL,
          BENCH_REDIS_PREFIX: h.redisPrefix,
          BENCH_MASTER_KEY: h.masterKey.toString('hex'),
        },
        nofile,
        ['--expose-gc'],
      ),
    );
    kids.push(...servers);
    const urls: string[] = (await Promise.all(servers.map((s) => s.next('ready', 60_000)))).map((r) => r.url);
    const addresses = Array.from({ length: SOURCE_ADDRESSES }, (_, i) => `127.0.0.${i + 1}`);

    const loaderCount = Math.ceil(sockets / SOCKETS_PER_LOADER);
    const loaders = Array.from({ length: loaderCount }, (_, i) => startRole('loader', {}, Math.min(limits.hard, SOCKETS_PER_LOADER + 1000)));
    kids.push(...loaders);
    await Promise.all(loaders.map((l) => l.next('ready', 60_000)));

    // Warm-up: a few sockets connected to each process and dropped.
    const warm = startRole('loader', {}, 2000);
    kids.push(warm);
    await warm.next('ready', 60_000);
    warm.send({ type: 'connect', urls, offset: 0, tokens: tokens.slice(0, 200 * PROCESSES), addresses, concurrency: 50 });
    await warm.next('connected');
    warm.send({ type: 'stop' });
    const measureAll = async (snapshot: string) => {
      const figures = await Promise.all(servers.map((s) => (s.send({ type: 'measure' }), s.next('memory'))));
      if (process.env.BENCH_SNAPSHOTS) {
        for (const [n, s] of servers.entries()) {
          s.send({ type: 'snapshot', file: `/tmp/rt${n}-${snapshot}.heapsnapshot` });
          await s.next('snapshot');
        }
      }
      return figures;
    };
    // The dropped sockets stay in the FIFO of sockets awaiting authorize until their deadline.
    await new Promise((r) => setTimeout(r, AUTHORIZE_TIMEOUT_MS + 1000));
    const before = await measureAll('before');

    // Every socket: player i on process i mod PROCESSES (loader 0 holds the seated players' sockets), the rest idle.
    t = now();
    loaders.forEach((l, i) =>
      l.send({
        type: 'connect',
        urls,
        offset: i * SOCKETS_PER_LOADER,
        tokens: tokens.slice(i * SOCKETS_PER_LOADER, (i + 1) * SOCKETS_PER_LOADER),
        addresses,
        concurrency: CONNECT_CONCURRENCY_PER_LOADER,
      }),
    );
    const connected = await Promise.all(loaders.map((l) => l.next('connected', 240_000)));
    const held = connected.reduce((n, c) => n + c.held, 0);
    const heldBy = servers.map((_, p) => connected.reduce((n, c) => n + (c.heldBy[p] ?? 0), 0));
    const failed = connected.reduce((n, c) => n + c.failed, 0);
    const connectSeconds = (now() - t) / 1000;
    log(`  ${held} sockets authorized in ${connectSeconds.toFixed(1)} s (${heldBy.join(' + ')}; ${failed} failed)`);

    await new Promise((r) => setTimeout(r, AUTHORIZE_TIMEOUT_MS + 1000));
    const after = await measureAll('after');
    const memory = servers.map((_, p) => {
      const [b, a, count] = [before[p], after[p], heldBy[p]];
      const per = (k: 'rss' | 'heapUsed' | 'external' | 'arrayBuffers' | 'heapSlack') => (a[k] - b[k]) / count;
      return {
        sockets: count,
        /** What the sockets hold: RSS less V8's heap slack (their objects, node's handles, malloc). */
        heldRssPerSocketBytes: Math.round(per('rss') - per('heapSlack')),
        rssPerSocketBytes: Math.round(per('rss')),
        heapSlackPerSocketBytes: Math.round(per('heapSlack')),
        heapUsedPerSocketBytes: Math.round(per('heapUsed')),
        externalPerSocketBytes: Math.round(per('external')),
        heapAndExternalPerSocketBytes: Math.round(per('heapUsed') + per('external')),
        baseRssMB: +(b.rss / 1048576).toFixed(1),
        rssMB: +(a.rss / 1048576).toFixed(1),
        baseHeapUsedMB: +(b.heapUsed / 1048576).toFixed(1),
        heapUsedMB: +(a.heapUsed / 1048576).toFixed(1),
      };
    });
    for (const [p, m] of memory.entries()) {
      log(`  realtime process ${p + 1} (${m.sockets} sockets): RSS ${m.baseRssMB} → ${m.rssMB} MB, heap ${m.baseHeapUsedMB} → ${m.heapUsedMB} MB`);
      log(
        `    per socket: RSS ${m.rssPerSocketBytes} B, of which V8 heap slack ${m.heapSlackPerSocketBytes} B; held by the sockets ${m.heldRssPerSocketBytes} B (heap ${m.heapUsedPerSocketBytes} B, external ${m.externalPerSocketBytes} B, the rest native)`,
      );
    }

    // Latency: sessions made and played through the HTTP API while every socket is held. Two passes of
    // SESSIONS sessions each: one request at a time (no queueing anywhere), then ACTION_CONCURRENCY
    // sessions at a time (the API and PostgreSQL busy). Seat k of a session is player s*SEATS+k, on
    // process k mod PROCESSES: every change goes through Redis to both processes. The API publishes each
    // event with the time it committed; this process listens on the channel too, so commit → frame is
    // measured as well.
    const committed = new Map<string, number>();
    const stopListening = await h.core.coordination.subscribe(SESSION_EVENTS_CHANNEL, (message) => {
      const event = JSON.parse(message) as SessionEvent;
      committed.set(stateKey(event.session), event.committedAt);
    });

    const runPass = async (firstSession: number, concurrency: number) => {
      const sent = new Map<string, { at: number; receivers: number }>();
      const post = async (path: string, token: string, body: unknown) => {
        const reply = await call(h.base, 'POST', path, { token, body });
        if (reply.status !== 200 && reply.status !== 201) throw new Error(`POST ${path}: ${reply.status} ${reply.text}`);
        return reply.body;
      };
      let next = firstSession;
      const started = now();
      const play = async () => {
        while (next < firstSession + SESSIONS) {
          const s = next++;
          const seat = (k: number) => tokens[s * SEATS + k];
          // The create's key needs the session's id: it is recorded with the time taken before sending.
          let at = now();
          const made = await post('/sessions', seat(0), { gameMode: 'bench', map: 'm' });
          sent.set(`${made.id}|j1`, { at, receivers: 1 });
          for (let k = 1; k < SEATS; k++) {
            sent.set(`${made.id}|j${k + 1}`, { at: now(), receivers: k + 1 });
            await post(`/sessions/${made.id}/join`, seat(k), {});
          }
          for (let k = 0; k < SEATS; k++) {
            at = now();
            sent.set(`${made.id}|r${k + 1}`, { at, receivers: SEATS });
            await post(`/sessions/${made.id}/ready`, seat(k), { isReady: true });
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, play));
      return { sent, seconds: (now() - started) / 1000, concurrency };
    };
    t = now();
    for (const s of servers) s.send({ type: 'loop-start' });
    const passes = [await runPass(0, 1), await runPass(SESSIONS, ACTION_CONCURRENCY)];
    for (const s of servers) s.send({ type: 'loop' });
    const realtimeEventLoopDelay = (await Promise.all(servers.map((s) => s.next('loop')))).map(
      ({ type: _loop, ...d }) => d as { p50Ms: number; p99Ms: number; maxMs: number },
    );
    await new Promise((r) => setTimeout(r, 500));
    await stopListening();

    for (const l of loaders) l.send({ type: 'samples' });
    const samples = await Promise.all(loaders.map((l) => l.next('samples')));
    const got = new Map<string, number[]>();
    for (const s of samples) for (const [k, times] of s.received as [string, number[]][]) got.set(k, [...(got.get(k) ?? []), ...times]);
    const summarise = (pass: Awaited<ReturnType<typeof runPass>>) => {
      const fromRequest: number[] = [];
      const fromCommit: number[] = [];
      /** Request sent → the API's commit: the HTTP side of the latency (API, PostgreSQL), once per request. */
      const toCommit: number[] = [];
      let expected = 0;
      for (const [key, { at, receivers }] of pass.sent) {
        expected += receivers;
        const commitAt = committed.get(key);
        if (commitAt !== undefined) toCommit.push(commitAt - at);
        for (const recv of got.get(key) ?? []) {
          fromRequest.push(recv - at);
          if (commitAt !== undefined) fromCommit.push(recv - commitAt);
        }
      }
      fromRequest.sort((a, b) => a - b);
      fromCommit.sort((a, b) => a - b);
      toCommit.sort((a, b) => a - b);
      const ms = (v: number) => +v.toFixed(2);
      return {
        concurrency: pass.concurrency,
        requests: pass.sent.size,
        requestsPerSecond: Math.round(pass.sent.size / pass.seconds),
        frames: fromRequest.length,
        missing: expected - fromRequest.length,
        p50Ms: ms(percentile(fromRequest, 50)),
        p99Ms: ms(percentile(fromRequest, 99)),
        maxMs: ms(fromRequest[fromRequest.length - 1] ?? NaN),
        commitToFrameP50Ms: ms(percentile(fromCommit, 50)),
        commitToFrameP99Ms: ms(percentile(fromCommit, 99)),
        requestToCommitP50Ms: ms(percentile(toCommit, 50)),
        requestToCommitP99Ms: ms(percentile(toCommit, 99)),
      };
    };
    const [sequential, concurrent] = passes.map(summarise);
    const latency = { sequential, concurrent, realtimeEventLoopDelay };
    for (const [name, l] of Object.entries({ sequential, concurrent })) {
      log(`  latency, ${name} (${l.concurrency} session${l.concurrency > 1 ? 's' : ''} at a time, ${l.requestsPerSecond} requests/s):`);
      log(`    HTTP request sent → every seat's session frame: p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms, max ${l.maxMs} ms`);
      log(`    commit → frame (the realtime path alone): p50 ${l.commitToFrameP50Ms} ms, p99 ${l.commitToFrameP99Ms} ms`);
      log(`    request sent → commit (the API and PostgreSQL): p50 ${l.requestToCommitP50Ms} ms, p99 ${l.requestToCommitP99Ms} ms`);
      log(`    ${l.frames} frames of ${l.requests} create/join/ready requests, ${l.missing} missing`);
    }
    for (const [p, d] of realtimeEventLoopDelay.entries()) {
      log(`  realtime process ${p + 1} event-loop delay meanwhile: p50 ${d.p50Ms} ms, p99 ${d.p99Ms} ms, max ${d.maxMs} ms`);
    }

    const figures = {
      sockets: {
        target: TARGET_SOCKETS,
        attempted: sockets,
        held,
        heldBy,
        failed,
        connectSeconds: +connectSeconds.toFixed(1),
        limitedBy,
        sourceAddresses: SOURCE_ADDRESSES,
      },
      memory,
      latency,
      verdicts: realtimeVerdicts(
        heldBy,
        memory.map((m) => m.heldRssPerSocketBytes),
        sequential,
        concurrent,
      ),
      seconds: Math.round((Date.now() - began) / 1000),
    };
    for (const v of figures.verdicts) log(`  ${v.met ? 'met   ' : 'MISSED'}  ${v.target}: ${v.what}: ${v.measured}`);
    log(`BENCH_JSON ${JSON.stringify(figures)}`);
  } finally {
    for (const k of kids) {
      if (k.proc.exitCode === null) {
        try {
          k.send({ type: 'stop' });
        } catch {
          /* already gone */
        }
      }
    }
    await new Promise((r) => setTimeout(r, 1500));
    for (const k of kids) if (k.proc.exitCode === null) k.proc.kill('SIGKILL');
    await h.close();
  }
}

/**
 * The realtime targets (issues 3 and 12), in the form test/bench/report.ts lists every target in. The
 * sockets are the issue's horizontal goal: one process holds at most ~19,900 here (the open-file hard
 * limit is 20,000 and cannot be raised), so two processes hold them together, as two pods would.
 */
function realtimeVerdicts(
  heldBy: number[],
  heldRssPerSocketBytes: number[],
  sequential: { p99Ms: number; missing: number },
  concurrent: { p99Ms: number; missing: number },
): Verdict[] {
  const held = heldBy.reduce((n, x) => n + x, 0);
  const seats = `HTTP change → every seat's frame (${SESSIONS} sessions × ${SEATS} seats, each session's seats on both processes)`;
  const scaledDown = TARGET_SOCKETS < GOAL_SOCKETS ? ` (scaled down: BENCH_SOCKETS=${TARGET_SOCKETS})` : '';
  return [
    {
      target: `idle authorized sockets, ${PROCESSES} realtime processes`,
      what: `hold ≥ ${GOAL_SOCKETS.toLocaleString('en-US')} together`,
      measured: `${held.toLocaleString('en-US')} (${heldBy.map((n) => n.toLocaleString('en-US')).join(' + ')})${scaledDown}`,
      met: held >= GOAL_SOCKETS,
    },
    {
      target: 'idle authorized sockets, each realtime process',
      what: 'RSS held per socket < 2 KB',
      measured: heldRssPerSocketBytes.map((b) => `${b} bytes`).join(', '),
      met: heldRssPerSocketBytes.every((b) => b < 2048),
    },
    {
      target: `${seats}, one change at a time`,
      what: 'p99 < 50 ms, no frame missing',
      measured: `${sequential.p99Ms} ms, ${sequential.missing} missing`,
      met: sequential.p99Ms < 50 && sequential.missing === 0,
    },
    {
      target: `${seats}, ${ACTION_CONCURRENCY} changes at a time`,
      what: 'p99 < 100 ms, no frame missing',
      measured: `${concurrent.p99Ms} ms, ${concurrent.missing} missing`,
      met: concurrent.p99Ms < 100 && concurrent.missing === 0,
    },
  ];
}

const role = process.argv[2];
const run = role === 'server' ? serverRole : role === 'loader' ? loaderRole : bench;
run().catch((err) => {
  process.stderr.write(`realtime bench failed: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
