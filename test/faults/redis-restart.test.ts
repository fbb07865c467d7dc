/**
 * Redis stopped and restarted under load (docs/reliability.md, "Faults: Redis and PostgreSQL
 * restarts"): real `hearth api` and `hearth realtime` processes on a fresh database of the tests'
 * PostgreSQL and a Redis of this test's own (test/support/own-redis.ts, never the shared one), a few
 * clients crediting gold with Idempotency-Keys, writing saves and reading, and a socket subscribed to a
 * session. Redis goes away for a few seconds and comes back. Held: the API keeps answering (no 5xx:
 * limits fail open, counted and logged), realtime gets its subscription back by itself (the changes
 * made while Redis was away are caught up, and a change made after it returned reaches the socket),
 * nothing acknowledged is lost or doubled, and the processes'
 * reconnections are counted (hearth_redis_reconnects_total) and logged.
 */
import fs from 'node:fs';
import WebSocket from 'ws';
import { makeScratchRun, type ScratchRun } from '../support/hearth-process';
import { type OwnRedis, startOwnRedis } from '../support/own-redis';
import { eventually, sleep } from '../support/wait';
import { Load, type Player, type Stack, expectAlive, expectNothingLostOrDoubled, metric, send, startStack } from './load';
import { reportFigure } from '../support/figures';

jest.setTimeout(120_000);

const DOWN_MS = 4_000;

let redis: OwnRedis;
let scratch: ScratchRun;
let stack: Stack;
let socket: WebSocket | undefined;

beforeAll(async () => {
  redis = await startOwnRedis();
  scratch = await makeScratchRun('faults_redis', (m) => new Error(m));
  stack = await startStack('redis', { DATABASE_URL: scratch.env.DATABASE_URL, REDIS_URL: redis.url }, { realtime: true });
});

afterAll(async () => {
  socket?.terminate();
  await stack?.stop();
  await scratch?.drop();
  await redis?.remove();
});

async function signInPlayer(subject: string): Promise<Player> {
  const o = await send(stack.base, 'POST', '/auth/server', { token: stack.serverKey, body: { subject } });
  if (o.status !== 201 && o.status !== 200) throw new Error(`sign-in: ${o.kind}`);
  return { id: o.body.player.id, token: o.body.accessToken };
}

/** A socket authorized as `player` and subscribed to the session; every `session` frame kept with its arrival time. */
async function watch(player: Player, sessionId: string): Promise<{ frames: { at: number; session: any }[]; closed: () => boolean }> {
  const info = await send(stack.base, 'GET', '/realtime', { token: player.token });
  const ws = new WebSocket(`ws://127.0.0.1:${stack.realtime!.port}${new URL(info.body.url).pathname}`);
  socket = ws;
  const frames: { at: number; session: any }[] = [];
  let subscribed = false;
  let closed = false;
  ws.on('open', () => ws.send(JSON.stringify({ v: 1, type: 'authorize', payload: { token: player.token } })));
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString());
    if (frame.type === 'authorized') ws.send(JSON.stringify({ v: 1, type: 'subscribe', payload: { sessionId } }));
    else if (frame.type === 'subscribed') subscribed = true;
    else if (frame.type === 'session') frames.push({ at: Date.now(), session: frame.payload.session });
  });
  ws.on('error', () => undefined);
  ws.on('close', () => (closed = true));
  await eventually(async () => subscribed, 10_000);
  return { frames, closed: () => closed };
}

test('Redis restarted mid-load: no 5xx, limits fail open (counted, logged), realtime resubscribes by itself, nothing lost', async () => {
  const players = await Promise.all(['a', 'b', 'c'].map((s) => signInPlayer(`faults-redis-${s}`)));
  const host = players[0];
  const made = await send(stack.base, 'POST', '/sessions', { token: host.token, body: { gameMode: 'duel', map: 'harbour' } });
  expect(made.status).toBe(201);
  const sessionId: string = made.body.id;
  // A second seat that never readies, so the host's toggles keep the session in CONFIGURING.
  expect((await send(stack.base, 'POST', `/sessions/${sessionId}/join`, { token: players[1].token, body: {} })).status).toBe(200);
  const watcher = await watch(await signInPlayer('faults-redis-watcher'), sessionId);

  // The host toggles ready, through the API, all along: each answer is the stored state.
  let readyState = false;
  const toggles: { at: number; kind: string }[] = [];
  const toggle = async () => {
    readyState = !readyState;
    const o = await send(stack.base, 'POST', `/sessions/${sessionId}/ready`, { token: host.token, body: { isReady: readyState } });
    toggles.push({ at: o.at, kind: o.kind });
    return o;
  };
  expect((await toggle()).status).toBe(200);
  await eventually(async () => watcher.frames.some((f) => f.session.players[0].isReady === true), 10_000);

  const failOpenBefore = await metric(stack.apiMetrics, 'hearth_rate_limit_fail_open_total');
  const load = new Load(stack.base, stack.serverKey, players);
  load.start();
  await sleep(2_000);

  // Redis away: every connection of both processes is cut.
  const stoppedAt = Date.now();
  await redis.stop();
  const downUntil = Date.now() + DOWN_MS;
  while (Date.now() < downUntil) {
    await toggle();
    await sleep(200);
  }
  const failOpenDuring = await metric(stack.apiMetrics, 'hearth_rate_limit_fail_open_total');
  // Taken before the start: the realtime process may reconnect and send its catch-up before this
  // process has seen Redis listen (its check polls), and no frame can come while Redis is away.
  const startedAt = Date.now();
  await redis.start();
  const backAt = Date.now();

  // The changes made while Redis was away reached no socket: once the subscription is back, the
  // realtime process sends the session as it is now, with nothing done by the client or the API.
  const missedState = readyState;
  let caughtUpAt = 0;
  await eventually(async () => {
    const seen = watcher.frames.find((f) => f.at >= startedAt && f.session.players[0].isReady === missedState);
    if (seen) caughtUpAt = seen.at;
    return seen !== undefined;
  }, 20_000).catch(() => {
    const since = (at: number) => at - startedAt;
    const frames = watcher.frames.filter((f) => f.at >= stoppedAt).map((f) => ({ at: since(f.at), isReady: f.session.players[0].isReady }));
    throw new Error(
      `no session frame with isReady ${missedState} since Redis was started again (ms from then): toggles ${JSON.stringify(
        toggles.filter((t) => t.at >= stoppedAt).map((t) => ({ at: since(t.at), kind: t.kind })),
      )}, frames ${JSON.stringify(frames)}, Redis listening after ${backAt - startedAt} ms`,
    );
  });
  const catchUpMs = caughtUpAt - startedAt;
  const stored = await send(stack.base, 'GET', `/sessions/${sessionId}`, { token: host.token });
  expect(watcher.frames[watcher.frames.length - 1].session).toEqual(stored.body);

  // Recovery of the fan-out: a change made once Redis is back reaches the subscribed socket, with no
  // restart and no new subscription from the client. Toggle until a frame shows a state set after `backAt`.
  const framesBefore = watcher.frames.length;
  let firstFrameAt = 0;
  await eventually(
    async () => {
      const o = await toggle();
      expect(o.status).toBe(200);
      const wanted = o.body.players[0].isReady;
      await sleep(100);
      const seen = watcher.frames.slice(framesBefore).find((f) => f.at >= o.at && f.session.players[0].isReady === wanted);
      if (seen) firstFrameAt = seen.at;
      return seen !== undefined;
    },
    20_000,
    0,
  );
  const realtimeRecoveryMs = firstFrameAt - backAt;

  await sleep(1_500);
  await load.stop();
  expectAlive(stack.api);
  expectAlive(stack.realtime!);
  expect(watcher.closed()).toBe(false);

  // The API answered everything, Redis or not: no 5xx, no refusal, no timeout, no dropped connection.
  expect(load.wrong).toEqual([]);
  const kinds = load.byKind();
  expect(Object.keys(kinds).filter((k) => !['200', '201'].includes(k))).toEqual([]);
  expect(toggles.filter((t) => t.kind !== '200')).toEqual([]);

  // Limits failed open while Redis was away: counted and logged; once it is back they are checked again.
  expect(failOpenDuring).toBeGreaterThan(failOpenBefore);
  const apiLog = fs.readFileSync(stack.api.log, 'utf8');
  expect(apiLog).toContain('rate limits unavailable; failing open');
  const failOpenAfter = await metric(stack.apiMetrics, 'hearth_rate_limit_fail_open_total');
  for (let i = 0; i < 10; i++) expect((await send(stack.base, 'GET', '/players/me', { token: host.token })).status).toBe(200);
  expect(await metric(stack.apiMetrics, 'hearth_rate_limit_fail_open_total')).toBe(failOpenAfter);

  // Recovery is the processes' own and counted: both connections of each process lost once and back.
  const realtimeLog = fs.readFileSync(stack.realtime!.log, 'utf8');
  for (const [url, log] of [
    [stack.apiMetrics, apiLog],
    [stack.realtime!.metrics, realtimeLog],
  ] as const) {
    for (const connection of ['command', 'subscriber']) {
      expect({ url, connection, lost: await metric(url, 'hearth_redis_connections_lost_total', { connection }) }).toEqual({ url, connection, lost: 1 });
      expect({ url, connection, reconnects: await metric(url, 'hearth_redis_reconnects_total', { connection }) }).toEqual({ url, connection, reconnects: 1 });
    }
    expect(log).toContain('redis connection lost; reconnecting');
    expect(log).toContain('redis connection recovered');
  }
  expect(realtimeLog).toContain('session states sent after redis came back');

  // Nothing durable lost or doubled: every acknowledged credit once in the ledger, the balance their
  // sum, every acknowledged save there with the data last written.
  const durable = await expectNothingLostOrDoubled(stack.base, stack.serverKey, load, players);

  const during = load.byKind(stoppedAt, backAt);
  const figures = {
    requests: load.outcomes.length + toggles.length,
    byKind: kinds,
    duringOutage: { seconds: (backAt - stoppedAt) / 1000, requests: Object.values(during).reduce((a, b) => a + b, 0), byKind: during },
    failOpen: failOpenDuring - failOpenBefore,
    sessionChangesDuringOutage: toggles.filter((t) => t.at >= stoppedAt && t.at < backAt).length,
    catchUpMs,
    realtimeRecoveryMs,
    creditsAcknowledged: durable.reduce((n, p) => n + p.references.length, 0),
  };
  reportFigure(`redis restart figures: ${JSON.stringify(figures)}`);
});
