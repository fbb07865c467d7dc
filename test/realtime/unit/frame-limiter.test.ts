/** The frame limiter: fixed clock windows of a second and a minute, the warning, then the close. */
import { PRE_AUTHORIZE_FRAMES } from '@hearth/realtime';
import { CLOSE_SOCKET, FrameLimiter, PASS, rateLimitedFrame, type FrameCounts } from '../../../apps/realtime/src/frame-limiter';

/** A clock minute boundary (the limiter's windows start at :00 and .000). */
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const LIMITS = { messagesPerSecond: 3, messagesPerMinute: 7 };

function fresh(): FrameCounts {
  return { second: -1, perSecond: 0, perMinute: 0, limitedUntil: -1, early: 0 };
}

test('per second: the limit passes, the next frame gets 1 s to wait, any frame before the second ends closes', () => {
  const limiter = new FrameLimiter(T0);
  const ws = fresh();
  for (let i = 0; i < 3; i++) expect(limiter.count(ws, LIMITS, T0 + 100 + i)).toBe(PASS);
  expect(limiter.count(ws, LIMITS, T0 + 200)).toBe(1);
  expect(limiter.count(ws, LIMITS, T0 + 999)).toBe(CLOSE_SOCKET);
});

test('per second: a client that waits for the next second goes on, and the refused frame was not counted', () => {
  const limiter = new FrameLimiter(T0);
  const ws = fresh();
  for (let i = 0; i < 3; i++) limiter.count(ws, LIMITS, T0 + 10);
  expect(limiter.count(ws, LIMITS, T0 + 20)).toBe(1);
  expect(limiter.count(ws, LIMITS, T0 + 1000)).toBe(PASS);
  expect(ws.perMinute).toBe(4);
});

test('windows are clock seconds, not a second from the first frame', () => {
  const limiter = new FrameLimiter(T0);
  const ws = fresh();
  for (let i = 0; i < 3; i++) expect(limiter.count(ws, LIMITS, T0 + 990)).toBe(PASS);
  // 20 ms later is another clock second.
  expect(limiter.count(ws, LIMITS, T0 + 1010)).toBe(PASS);
});

test('per minute: past the limit the wait is the seconds left in the clock minute, and the minute refuses to its end', () => {
  const limiter = new FrameLimiter(T0);
  const ws = fresh();
  for (let s = 0; s < 7; s++) expect(limiter.count(ws, LIMITS, T0 + (10 + s) * 1000)).toBe(PASS);
  expect(limiter.count(ws, LIMITS, T0 + 17_500)).toBe(60 - 17);
  expect(limiter.count(ws, LIMITS, T0 + 59_999)).toBe(CLOSE_SOCKET);
});

test('per minute: the next clock minute starts afresh', () => {
  const limiter = new FrameLimiter(T0 + 5_000);
  const ws = fresh();
  for (let s = 0; s < 7; s++) limiter.count(ws, LIMITS, T0 + 50_000 + s * 1000);
  expect(limiter.count(ws, LIMITS, T0 + 57_000)).toBe(3);
  for (let i = 0; i < 3; i++) expect(limiter.count(ws, LIMITS, T0 + 60_000 + i)).toBe(PASS);
  expect(ws.perMinute).toBe(3);
});

test('the clock base does not shift the windows: a limiter made mid-minute counts the same clock minute', () => {
  const limiter = new FrameLimiter(T0 + 42_123);
  const ws = fresh();
  for (let i = 0; i < 7; i++) limiter.count(ws, { messagesPerSecond: 100, messagesPerMinute: 7 }, T0 + 59_000);
  expect(limiter.count(ws, { messagesPerSecond: 100, messagesPerMinute: 7 }, T0 + 59_500)).toBe(1);
});

test('start: the windows of an authorized socket begin with its next frame', () => {
  const limiter = new FrameLimiter(T0);
  const ws = fresh();
  limiter.start(ws);
  expect(ws.second).toBe(-1);
  expect(limiter.count(ws, LIMITS, T0 + 3_000)).toBe(PASS);
  expect(ws.second).toBe(3);
});

test(`before authorization: ${PRE_AUTHORIZE_FRAMES} frames are taken, the next is one too many`, () => {
  const limiter = new FrameLimiter(T0);
  const ws = fresh();
  for (let i = 0; i < PRE_AUTHORIZE_FRAMES; i++) expect(limiter.countEarly(ws)).toBe(true);
  expect(limiter.countEarly(ws)).toBe(false);
});

test('the warning frame carries retryAfterSeconds and the frame’s id', () => {
  expect(JSON.parse(rateLimitedFrame(4, 'x'))).toEqual({
    v: 1,
    type: 'error',
    id: 'x',
    payload: { error: 'rate-limited', message: expect.stringContaining('4 s'), details: { retryAfterSeconds: 4 } },
  });
  expect(JSON.parse(rateLimitedFrame(1))).not.toHaveProperty('id');
});
