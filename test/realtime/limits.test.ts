/**
 * The plan's socket limits: frame size (1009), frames a second and a minute (an `error rate-limited`,
 * then 1008 for a frame before the window ends), and subscriptions (`error quota-exceeded`).
 */
import { type Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import { environment, plan, project, serverKey, standardManifests } from '../support/manifests';
import { Client, type RealtimeInstance, sleep, startRealtime } from './support';

let h: Harness;
let rt: RealtimeInstance;
const clients: Client[] = [];
let n = 0;

const SECONDLY = { maxMessageBytes: 600, messagesPerSecond: 5, messagesPerMinute: 1000, maxSubscriptions: 2 };
const MINUTELY = { maxMessageBytes: 4096, messagesPerSecond: 100, messagesPerMinute: 8, maxSubscriptions: 10 };
const WATCHFUL = { maxMessageBytes: 4096, messagesPerSecond: 100, messagesPerMinute: 1000, maxSubscriptions: 2 };

async function socket(key: string): Promise<{ c: Client; token: string; id: string }> {
  const t = await signIn(h.base, h.serverKeys[key], `limits-${++n}`);
  const c = await Client.authorized(rt.url, t.accessToken);
  clients.push(c);
  return { c, token: t.accessToken, id: t.player.id };
}

/** Waits for `ms` into the next clock second (always the next one: a frame sent now may be counted in this one). */
async function startOfSecond(ms = 20): Promise<void> {
  const into = Date.now() % 1000;
  await sleep(1000 - into + ms);
}

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      plan('secondly', { realtime: SECONDLY }),
      project('sec', { plan: 'secondly' }),
      environment('sec-live', 'sec'),
      serverKey('sec-live-key', 'sec-live'),
      plan('minutely', { realtime: MINUTELY }),
      project('min', { plan: 'minutely' }),
      environment('min-live', 'min'),
      serverKey('min-live-key', 'min-live'),
      plan('watchful', { realtime: WATCHFUL }),
      project('watch', { plan: 'watchful' }),
      environment('watch-live', 'watch'),
      serverKey('watch-live-key', 'watch-live'),
    ],
  });
  rt = await startRealtime(h, { tickMs: 100 });
});

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

afterAll(async () => {
  await rt?.stop();
  await h?.close();
});

describe('maxMessageBytes', () => {
  test('a frame of exactly maxMessageBytes is taken; one byte more closes the socket with 1009', async () => {
    const { c } = await socket('sec-live-key');
    // JSON allows whitespace after the value: pad a ping to an exact size.
    const padded = (bytes: number) => {
      const frame = JSON.stringify({ v: 1, type: 'ping', id: 'sized' });
      return frame + ' '.repeat(bytes - Buffer.byteLength(frame));
    };
    c.sendRaw(padded(SECONDLY.maxMessageBytes));
    expect((await c.next()).type).toBe('pong');
    c.sendRaw(padded(SECONDLY.maxMessageBytes + 1));
    expect(await c.waitClosed()).toEqual({ code: 1009, reason: 'message-too-big' });
    // Counted in bytes, not characters.
    const { c: d } = await socket('sec-live-key');
    d.sendRaw(JSON.stringify({ v: 1, type: 'ping', id: 'é'.repeat(40) }) + ' '.repeat(SECONDLY.maxMessageBytes - 80));
    expect(await d.waitClosed()).toEqual({ code: 1009, reason: 'message-too-big' });
  });
});

describe('messages per second', () => {
  test('past the limit: one error rate-limited, not acted on; the next frame in that second closes with 1008', async () => {
    const { c } = await socket('sec-live-key');
    await startOfSecond();
    for (let i = 1; i <= SECONDLY.messagesPerSecond + 1; i++) c.send({ v: 1, type: 'ping', id: i });
    for (let i = 1; i <= SECONDLY.messagesPerSecond; i++) expect(await c.next()).toEqual({ v: 1, type: 'pong', id: i, payload: {} });
    expect(await c.next()).toEqual({
      v: 1,
      type: 'error',
      id: SECONDLY.messagesPerSecond + 1,
      payload: { error: 'rate-limited', message: expect.any(String), details: { retryAfterSeconds: 1 } },
    });
    expect(Date.now() % 1000).toBeLessThan(900); // still the same second
    c.send({ v: 1, type: 'ping', id: 'one-too-many' });
    expect(await c.waitClosed()).toEqual({ code: 1008, reason: 'rate-limited' });
    expect(c.frames).toEqual([]);
  });

  test('a client that waits for the next second after the warning goes on', async () => {
    const { c } = await socket('sec-live-key');
    await startOfSecond();
    for (let i = 0; i < SECONDLY.messagesPerSecond + 1; i++) c.send({ v: 1, type: 'ping' });
    await c.waitFor((f) => f.type === 'error' && f.payload.error === 'rate-limited', 'the warning');
    await startOfSecond();
    c.send({ v: 1, type: 'ping', id: 'later' });
    expect(await c.next()).toEqual({ v: 1, type: 'pong', id: 'later', payload: {} });
  });

  test('a refused frame is not acted on: a subscribe past the limit does not subscribe', async () => {
    const host = await signIn(h.base, h.serverKeys['sec-live-key'], `limits-host-${++n}`);
    const made = await call(h.base, 'POST', '/sessions', { token: host.accessToken, body: { gameMode: 'm', map: 'm' } });
    const { c } = await socket('sec-live-key');
    await startOfSecond();
    for (let i = 0; i < SECONDLY.messagesPerSecond; i++) c.send({ v: 1, type: 'ping' });
    c.send({ v: 1, type: 'subscribe', id: 's', payload: { sessionId: made.body.id } });
    const warning = await c.waitFor((f) => f.type === 'error', 'the warning');
    expect(warning.id).toBe('s');
    expect(warning.payload.error).toBe('rate-limited');
    await startOfSecond();
    await call(h.base, 'POST', `/sessions/${made.body.id}/ready`, { token: host.accessToken, body: { isReady: true } });
    await c.quiet(300);
  });
});

describe('messages per minute', () => {
  test('past the minute’s limit: error rate-limited with the seconds left in the minute, then 1008', async () => {
    const { c } = await socket('min-live-key');
    const secondOfMinute = Math.floor(Date.now() / 1000) % 60;
    if (secondOfMinute >= 57) await sleep((60 - secondOfMinute) * 1000 + 50); // wall time: the frames count per clock minute
    const total = MINUTELY.messagesPerMinute + 1;
    const now = Math.floor(Date.now() / 1000);
    for (let i = 1; i <= total; i++) c.send({ v: 1, type: 'ping', id: i });
    for (let i = 1; i < total; i++) expect((await c.next()).type).toBe('pong');
    const warning = await c.next();
    expect(warning).toEqual({
      v: 1,
      type: 'error',
      id: total,
      payload: { error: 'rate-limited', message: expect.any(String), details: { retryAfterSeconds: expect.any(Number) } },
    });
    const expected = 60 - (now % 60);
    expect([expected, expected - 1]).toContain(warning.payload.details.retryAfterSeconds);
    await sleep(1100); // a later second of the same minute: the minute still refuses
    c.send({ v: 1, type: 'ping' });
    expect(await c.waitClosed()).toEqual({ code: 1008, reason: 'rate-limited' });
  });
});

describe('maxSubscriptions', () => {
  /**
   * The `subscribed` answer for that session. A lobby's own creation event can reach the socket
   * just after the subscription (it travels through Redis), so a `session` frame may come first.
   * Frames before the answer are dropped: wait for one subscription before sending the next.
   */
  function subscribed(c: Client, sessionId: string) {
    return c.waitFor((f) => f.type === 'subscribed' && f.payload?.sessionId === sessionId, `subscribed to ${sessionId}`);
  }

  async function lobby(key = 'watch-live-key') {
    const host = await signIn(h.base, h.serverKeys[key], `limits-lobby-${++n}`);
    const made = await call(h.base, 'POST', '/sessions', { token: host.accessToken, body: { gameMode: 'm', map: 'm' } });
    expect(made.status).toBe(201);
    return { id: made.body.id as string, hostToken: host.accessToken };
  }

  test('past maxSubscriptions, subscribe is refused with quota-exceeded; sessions held by a seat do not count', async () => {
    const me = await socket('watch-live-key');
    // Three sessions the player holds a seat in: followed, and free.
    for (let i = 0; i < 3; i++) {
      const made = await call(h.base, 'POST', '/sessions', { token: me.token, body: { gameMode: 'm', map: 'm' } });
      expect((await me.c.session(made.body.id)).type).toBe('session');
    }
    const [a, b, c] = [await lobby(), await lobby(), await lobby()];
    me.c.send({ v: 1, type: 'subscribe', id: 'a', payload: { sessionId: a.id } });
    await subscribed(me.c, a.id);
    me.c.send({ v: 1, type: 'subscribe', id: 'b', payload: { sessionId: b.id } });
    await subscribed(me.c, b.id);
    me.c.send({ v: 1, type: 'subscribe', id: 'c', payload: { sessionId: c.id } });
    expect(await me.c.waitFor((f) => f.type !== 'session')).toEqual({
      v: 1,
      type: 'error',
      id: 'c',
      payload: { error: 'quota-exceeded', message: expect.any(String), details: { quota: 'subscriptions', limit: WATCHFUL.maxSubscriptions } },
    });
    // Not followed.
    await call(h.base, 'POST', `/sessions/${c.id}/ready`, { token: c.hostToken, body: { isReady: true } });
    await me.c.quiet(300);
    // Subscribing again to one already followed is not a new subscription.
    me.c.send({ v: 1, type: 'subscribe', id: 'a2', payload: { sessionId: a.id } });
    expect((await me.c.waitFor((f) => f.type !== 'session')).type).toBe('subscribed');
    // Unsubscribing frees a place.
    me.c.send({ v: 1, type: 'unsubscribe', payload: { sessionId: a.id } });
    me.c.send({ v: 1, type: 'subscribe', id: 'c2', payload: { sessionId: c.id } });
    expect(await me.c.waitFor((f) => f.type !== 'session')).toMatchObject({ type: 'subscribed', id: 'c2', payload: { sessionId: c.id } });
  });

  test('a session the player holds a seat in can always be subscribed to, at the limit too', async () => {
    const me = await socket('watch-live-key');
    const [a, b] = [await lobby(), await lobby()];
    // One at a time: the answers of two subscribes sent at once may come in either order.
    me.c.send({ v: 1, type: 'subscribe', payload: { sessionId: a.id } });
    await subscribed(me.c, a.id);
    me.c.send({ v: 1, type: 'subscribe', payload: { sessionId: b.id } });
    await subscribed(me.c, b.id);
    const mine = await call(h.base, 'POST', '/sessions', { token: me.token, body: { gameMode: 'm', map: 'm' } });
    await me.c.session(mine.body.id);
    me.c.send({ v: 1, type: 'unsubscribe', payload: { sessionId: mine.body.id } });
    me.c.send({ v: 1, type: 'subscribe', id: 'own', payload: { sessionId: mine.body.id } });
    expect(await me.c.waitFor((f) => f.type !== 'session')).toEqual({
      v: 1,
      type: 'subscribed',
      id: 'own',
      payload: { sessionId: mine.body.id, session: mine.body },
    });
  });

  test('a watched session the player then takes a seat in stops counting', async () => {
    const me = await socket('watch-live-key');
    const [a, b, c] = [await lobby(), await lobby(), await lobby()];
    // One at a time: the answers of two subscribes sent at once may come in either order.
    me.c.send({ v: 1, type: 'subscribe', payload: { sessionId: a.id } });
    await subscribed(me.c, a.id);
    me.c.send({ v: 1, type: 'subscribe', payload: { sessionId: b.id } });
    await subscribed(me.c, b.id);
    expect((await call(h.base, 'POST', `/sessions/${a.id}/join`, { token: me.token, body: {} })).status).toBe(200);
    await me.c.session(a.id);
    me.c.send({ v: 1, type: 'subscribe', id: 'third', payload: { sessionId: c.id } });
    expect(await me.c.waitFor((f) => f.type !== 'session')).toMatchObject({ type: 'subscribed', id: 'third' });
  });
});

test('GET /realtime reports the limits of the caller’s plan', async () => {
  const sec = await signIn(h.base, h.serverKeys['sec-live-key'], `limits-info-${++n}`);
  const min = await signIn(h.base, h.serverKeys['min-live-key'], `limits-info-${++n}`);
  expect((await call(h.base, 'GET', '/realtime', { token: sec.accessToken })).body.limits).toEqual(SECONDLY);
  expect((await call(h.base, 'GET', '/realtime', { token: min.accessToken })).body.limits).toEqual(MINUTELY);
  const watch = await signIn(h.base, h.serverKeys['watch-live-key'], `limits-info-${++n}`);
  expect((await call(h.base, 'GET', '/realtime', { token: watch.accessToken })).body.limits).toEqual(WATCHFUL);
});
