/**
 * Which state of a session is the newest, whatever order events and reads come in (SessionStates):
 * what may go to the followers, what a read answers, what changed during a read, and how long a state
 * is kept. The clock is the test's (TestClock, standing still unless advanced).
 */
import { STATE_RETAIN_MS, SessionStates } from '../../../apps/realtime/src/session-states';
import { TestClock } from '../../support/clock';
import { sessionOf } from './sockets';

function setup() {
  const clock = new TestClock({ at: Date.UTC(2026, 0, 1) });
  return { clock, states: new SessionStates(clock) };
}

describe('toFollowers: what every follower may be sent', () => {
  test('each newer version goes out; an older or the same one that arrives later does not', () => {
    const { states } = setup();
    expect(states.toFollowers(1, sessionOf('s', ['a']), 1)).toBe(true);
    expect(states.toFollowers(1, sessionOf('s', ['a', 'b']), 3)).toBe(true);
    expect(states.toFollowers(1, sessionOf('s', ['a', 'c']), 2)).toBe(false);
    expect(states.toFollowers(1, sessionOf('s', ['a', 'b']), 3)).toBe(false);
    expect(states.newest(1, 's')).toEqual(sessionOf('s', ['a', 'b']));
    expect(states.toFollowers(1, sessionOf('s', ['a']), 4)).toBe(true);
    expect(states.newest(1, 's')).toEqual(sessionOf('s', ['a']));
  });

  test('sessions are apart: a version of one says nothing of another', () => {
    const { states } = setup();
    expect(states.toFollowers(1, sessionOf('s', ['a']), 5)).toBe(true);
    expect(states.toFollowers(1, sessionOf('t', ['a']), 1)).toBe(true);
    expect(states.newest(1, 't')).toEqual(sessionOf('t', ['a']));
  });

  test('a state is of its environment: the same id in another one is not it', () => {
    const { states } = setup();
    states.toFollowers(1, sessionOf('s', ['a']), 5);
    expect(states.newest(2, 's')).toBeUndefined();
    expect(states.toFollowers(2, sessionOf('s', ['b']), 1)).toBe(true);
  });

  test('after a read newer than what went out, older events stay back; the read version’s own event goes out once', () => {
    const { states } = setup();
    states.toFollowers(1, sessionOf('s', ['a']), 1);
    expect(states.read(1, sessionOf('s', ['a', 'b', 'c']), 3)).toEqual(sessionOf('s', ['a', 'b', 'c']));
    // The socket that read version 3 must not be told version 2 afterwards; the others get 3 when its event comes.
    expect(states.toFollowers(1, sessionOf('s', ['a', 'b']), 2)).toBe(false);
    expect(states.toFollowers(1, sessionOf('s', ['a', 'b', 'c']), 3)).toBe(true);
    expect(states.toFollowers(1, sessionOf('s', ['a', 'b', 'c']), 3)).toBe(false);
  });
});

describe('read: what a read of the database answers', () => {
  test('the read when it is the newest known, else the newer state that arrived', () => {
    const { states } = setup();
    expect(states.read(1, sessionOf('s', ['a']), 2)).toEqual(sessionOf('s', ['a']));
    states.toFollowers(1, sessionOf('s', ['a', 'b']), 4);
    expect(states.read(1, sessionOf('s', ['a', 'x']), 3)).toEqual(sessionOf('s', ['a', 'b']));
    expect(states.read(1, sessionOf('s', ['a', 'b']), 4)).toEqual(sessionOf('s', ['a', 'b']));
    expect(states.read(1, sessionOf('s', ['b']), 5)).toEqual(sessionOf('s', ['b']));
    expect(states.newest(1, 's')).toEqual(sessionOf('s', ['b']));
  });
});

describe('changedSince: what changed while a read was in flight', () => {
  test('the newest state of each session of the environment that changed after the read began, once each', () => {
    const { states } = setup();
    states.toFollowers(1, sessionOf('before', ['a']), 1);
    const start = states.begin();
    states.toFollowers(1, sessionOf('s', ['a']), 1);
    states.toFollowers(1, sessionOf('s', ['a', 'b']), 2);
    states.toFollowers(1, sessionOf('t', ['c']), 7);
    states.toFollowers(2, sessionOf('u', ['a']), 1);
    // A late event changes nothing, so it is not a change.
    states.toFollowers(1, sessionOf('s', ['a']), 1);
    const changed = states.changedSince(start, 1);
    expect(changed).toHaveLength(2);
    expect(changed).toEqual(expect.arrayContaining([sessionOf('s', ['a', 'b']), sessionOf('t', ['c'])]));
    states.end(start);
  });

  test('two reads in flight each see what changed since their own start', () => {
    const { states } = setup();
    const first = states.begin();
    states.toFollowers(1, sessionOf('s', ['a']), 1);
    const second = states.begin();
    states.toFollowers(1, sessionOf('t', ['b']), 1);
    expect(states.changedSince(second, 1)).toEqual([sessionOf('t', ['b'])]);
    states.end(second);
    expect(states.changedSince(first, 1)).toHaveLength(2);
    states.end(first);
    const third = states.begin();
    expect(states.changedSince(third, 1)).toEqual([]);
    states.end(third);
  });
});

describe('how long a state is kept', () => {
  test('dropped once it has not changed for the retention, at the next change; then an old version is taken as new', async () => {
    const { clock, states } = setup();
    states.toFollowers(1, sessionOf('s', ['a', 'b']), 5);
    await clock.advance(STATE_RETAIN_MS - 1);
    states.toFollowers(1, sessionOf('t', ['c']), 1);
    expect(states.toFollowers(1, sessionOf('s', ['a']), 4)).toBe(false);
    expect(states.size).toBe(2);
    await clock.advance(1);
    states.toFollowers(1, sessionOf('u', ['d']), 1);
    expect(states.newest(1, 's')).toBeUndefined();
    // t changed later than s: kept until its own retention has passed.
    expect(states.newest(1, 't')).toEqual(sessionOf('t', ['c']));
    expect(states.size).toBe(2);
    expect(states.toFollowers(1, sessionOf('s', ['a']), 4)).toBe(true);
  });

  test('a sweep (the server’s tick) drops them without any change, and keeps what is younger than the retention', async () => {
    const { clock, states } = setup();
    states.toFollowers(1, sessionOf('s', ['a']), 1);
    await clock.advance(STATE_RETAIN_MS / 2);
    states.read(1, sessionOf('t', ['b']), 4);
    await clock.advance(STATE_RETAIN_MS / 2);
    states.sweep();
    expect(states.newest(1, 's')).toBeUndefined();
    expect(states.newest(1, 't')).toEqual(sessionOf('t', ['b']));
    await clock.advance(STATE_RETAIN_MS / 2);
    states.sweep();
    expect(states.size).toBe(0);
  });

  test('kept past the retention while a read that began before it changed is in flight', async () => {
    const { clock, states } = setup();
    const start = states.begin();
    states.toFollowers(1, sessionOf('s', ['a']), 3);
    await clock.advance(STATE_RETAIN_MS * 3);
    states.toFollowers(1, sessionOf('t', ['c']), 1);
    expect(states.read(1, sessionOf('s', []), 2)).toEqual(sessionOf('s', ['a']));
    states.end(start);
    await clock.advance(STATE_RETAIN_MS);
    states.toFollowers(1, sessionOf('u', ['d']), 1);
    expect(states.newest(1, 's')).toBeUndefined();
    expect(states.newest(1, 't')).toBeUndefined();
  });
});
