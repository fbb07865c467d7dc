/** The authorize-deadline queue and the token-expiry buckets: the two sweeps of the server's one tick. */
import { AuthorizeDeadlines } from '../../../apps/realtime/src/authorize-deadlines';
import { TokenExpiries } from '../../../apps/realtime/src/token-expiries';

describe('authorize deadlines', () => {
  test('sockets come due in order of arrival, each once, when their deadline has come', () => {
    const q = new AuthorizeDeadlines<string>(1000);
    q.add('a', 0);
    q.add('b', 10);
    q.add('c', 500);
    const due: string[] = [];
    q.sweep(999, (s) => due.push(s));
    expect(due).toEqual([]);
    q.sweep(1010, (s) => due.push(s));
    expect(due).toEqual(['a', 'b']);
    q.sweep(1010, (s) => due.push(s));
    expect(due).toEqual(['a', 'b']);
    q.sweep(5000, (s) => due.push(s));
    expect(due).toEqual(['a', 'b', 'c']);
    expect(q.size).toBe(0);
  });

  test('sockets added after a sweep are kept to their own deadline', () => {
    const q = new AuthorizeDeadlines<string>(100);
    const due: string[] = [];
    q.add('a', 0);
    q.sweep(100, (s) => due.push(s));
    q.add('b', 150);
    q.sweep(200, (s) => due.push(s));
    expect(due).toEqual(['a']);
    q.sweep(250, (s) => due.push(s));
    expect(due).toEqual(['a', 'b']);
  });

  test('a long queue is compacted as it is swept, and keeps every live entry in order', () => {
    const q = new AuthorizeDeadlines<number>(10);
    for (let i = 0; i < 5000; i++) q.add(i, i);
    const due: number[] = [];
    q.sweep(3009, (n) => due.push(n));
    expect(due).toEqual(Array.from({ length: 3000 }, (_, i) => i));
    expect(q.size).toBe(2000);
    for (let i = 5000; i < 5010; i++) q.add(i, i);
    q.sweep(10_000, (n) => due.push(n));
    expect(due).toEqual(Array.from({ length: 5010 }, (_, i) => i));
    expect(q.size).toBe(0);
  });
});

describe('token expiries', () => {
  const T = 1_700_000_000;

  test('a socket is handed over once the second of its exp has begun, not before', () => {
    const expiries = new TokenExpiries<{ exp: number; name: string }>(T * 1000);
    const a = { exp: T + 2, name: 'a' };
    const b = { exp: T + 3, name: 'b' };
    expiries.schedule(a);
    expiries.schedule(b);
    const out: string[] = [];
    expiries.sweep((T + 1) * 1000 + 999, (s) => out.push(s.name));
    expect(out).toEqual([]);
    expiries.sweep((T + 2) * 1000, (s) => out.push(s.name));
    expect(out).toEqual(['a']);
    expiries.sweep((T + 2) * 1000 + 500, (s) => out.push(s.name));
    expect(out).toEqual(['a']);
    expect(expiries.size).toBe(1);
  });

  test('a late tick sweeps every second it missed', () => {
    const expiries = new TokenExpiries<{ exp: number }>(T * 1000);
    const sockets = [1, 2, 3, 4].map((d) => ({ exp: T + d }));
    for (const s of sockets) expiries.schedule(s);
    const out: { exp: number }[] = [];
    expiries.sweep((T + 10) * 1000, (s) => out.push(s));
    expect(out).toEqual(sockets);
  });

  test('cancel, then a new exp: the socket expires at the new second only (authorize again)', () => {
    const expiries = new TokenExpiries<{ exp: number }>(T * 1000);
    const s = { exp: T + 2 };
    expiries.schedule(s);
    expiries.cancel(s);
    s.exp = T + 60;
    expiries.schedule(s);
    const out: { exp: number }[] = [];
    expiries.sweep((T + 59) * 1000, (x) => out.push(x));
    expect(out).toEqual([]);
    expiries.sweep((T + 60) * 1000, (x) => out.push(x));
    expect(out).toEqual([s]);
    // A closed socket is cancelled and never handed over.
    const closed = { exp: T + 61 };
    expiries.schedule(closed);
    expiries.cancel(closed);
    expiries.sweep((T + 100) * 1000, (x) => out.push(x));
    expect(out).toEqual([s]);
    expect(expiries.size).toBe(0);
  });
});
