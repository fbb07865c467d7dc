/**
 * Fan-out of one session event to the sockets of one process: who gets `session`, who gets
 * `session-closed`, who starts following, with the frame serialised once; and an event that arrives
 * after a newer one of its session. Sockets are HearthSocket
 * objects without a connection; what the server would send is recorded by a host of the test's own.
 * Across processes and the API, the same is tested in test/realtime/fanout.test.ts.
 */
import { createLogger } from '@hearth/core';
import type { SessionEvent } from '@hearth/core/sessions';
import { RealtimeMetrics, type HearthSocket, type SocketHost } from '@hearth/realtime';
import { Fanout } from '../../../apps/realtime/src/fanout';
import { SessionStates } from '../../../apps/realtime/src/session-states';
import { SocketIndex } from '../../../apps/realtime/src/socket-index';
import { TestClock } from '../../support/clock';
import { authorizedSocketOf, environmentOf, sessionOf } from './sockets';

interface Sent {
  ws: HearthSocket;
  data: string | Buffer;
  type: string;
}

function setup() {
  const sent: Sent[] = [];
  const host: SocketHost = {
    send: (ws, data, type) => sent.push({ ws, data, type }),
    close: () => undefined,
    fault: (_ws, err) => {
      throw err;
    },
  };
  const index = new SocketIndex();
  const metrics = new RealtimeMetrics(false);
  const unread = () => Promise.reject(new Error('no session is read in these tests'));
  const fanout = new Fanout({
    sessions: { get: unread, listForPlayer: unread },
    index,
    states: new SessionStates(new TestClock()),
    host,
    metrics,
    log: createLogger('silent'),
  });
  const socket = (playerId: string, environmentId = 1) => {
    const ws = authorizedSocketOf(playerId, environmentOf(environmentId));
    index.add(ws);
    return ws;
  };
  // Each event the next version unless the test gives one (as the API raises it by one per change).
  let version = 0;
  const publish = (event: Partial<SessionEvent> & Pick<SessionEvent, 'session'>) =>
    fanout.onSessionEvent(JSON.stringify({ environmentId: 1, removed: [], added: [], committedAt: Date.now(), version: ++version, ...event }));
  const frames = (ws: HearthSocket) => sent.filter((s) => s.ws === ws).map((s) => JSON.parse(s.data.toString()));
  return { sent, index, metrics, fanout, socket, publish, frames };
}

test('a session event reaches every follower, seated or watching, and nobody else; the bytes are serialised once', () => {
  const { sent, index, socket, publish, frames } = setup();
  const [seated, watching, other] = [socket('a'), socket('b'), socket('c')];
  index.follow(seated, 's1', true);
  index.follow(watching, 's1', false);
  const session = sessionOf('s1', ['a', 'z']);
  publish({ session });
  expect(frames(seated)).toEqual([{ v: 1, type: 'session', payload: { session } }]);
  expect(frames(watching)).toEqual([{ v: 1, type: 'session', payload: { session } }]);
  expect(frames(other)).toEqual([]);
  expect(sent[0].data).toBe(sent[1].data);
});

test('added: every socket of the player in that environment starts following and gets the session', () => {
  const { index, socket, publish, frames } = setup();
  const [phone, pc, elsewhere] = [socket('a'), socket('a'), socket('a', 2)];
  const session = sessionOf('s1', ['h', 'a']);
  publish({ session, added: ['a'] });
  for (const ws of [phone, pc]) {
    expect(frames(ws)).toEqual([{ v: 1, type: 'session', payload: { session } }]);
    expect(ws.seated).toEqual(['s1']);
  }
  expect(frames(elsewhere)).toEqual([]);
  expect(index.follows(elsewhere, 's1')).toBe(false);
});

test('removed: the player’s sockets get session-closed with the reason and stop following; the others get the session', () => {
  const { index, socket, publish, frames } = setup();
  const [kicked, host] = [socket('k'), socket('h')];
  index.follow(kicked, 's1', true);
  index.follow(host, 's1', true);
  const session = sessionOf('s1', ['h']);
  publish({ session, removed: [{ playerId: 'k', reason: 'kicked' }] });
  expect(frames(kicked)).toEqual([{ v: 1, type: 'session-closed', payload: { sessionId: 's1', reason: 'kicked' } }]);
  expect(index.follows(kicked, 's1')).toBe(false);
  expect(frames(host)).toEqual([{ v: 1, type: 'session', payload: { session } }]);
});

test('removed: a socket of the player that did not follow the session is told nothing', () => {
  const { socket, publish, frames } = setup();
  const ws = socket('k');
  publish({ session: sessionOf('s1', ['h']), removed: [{ playerId: 'k', reason: 'left' }] });
  expect(frames(ws)).toEqual([]);
});

test('the last player leaves a lobby: followers get the final session, then session-closed deleted, and stop following', () => {
  const { index, socket, publish, frames } = setup();
  const [leaver, watcher] = [socket('l'), socket('w')];
  index.follow(leaver, 's1', true);
  index.follow(watcher, 's1', false);
  const session = sessionOf('s1', []);
  publish({ session, removed: [{ playerId: 'l', reason: 'left' }] });
  expect(frames(leaver)).toEqual([{ v: 1, type: 'session-closed', payload: { sessionId: 's1', reason: 'left' } }]);
  expect(frames(watcher)).toEqual([
    { v: 1, type: 'session', payload: { session } },
    { v: 1, type: 'session-closed', payload: { sessionId: 's1', reason: 'deleted' } },
  ]);
  expect(index.followersOf('s1')).toBeUndefined();
});

test('an empty session that is no longer a lobby is not closed by the last-player rule', () => {
  const { index, socket, publish, frames } = setup();
  const watcher = socket('w');
  index.follow(watcher, 's1', false);
  const session = sessionOf('s1', [], 'COMPLETE');
  publish({ session });
  expect(frames(watcher)).toEqual([{ v: 1, type: 'session', payload: { session } }]);
  expect(index.follows(watcher, 's1')).toBe(true);
});

test('an unreadable message is passed over and counted nowhere', async () => {
  const { sent, fanout, metrics, socket, index } = setup();
  index.follow(socket('a'), 's1', true);
  fanout.onSessionEvent('not json');
  fanout.onSessionEvent(JSON.stringify({ session: { id: 's1' } }));
  expect(sent).toEqual([]);
  expect((await metrics.events.get()).values[0]?.value ?? 0).toBe(0);
});

test('unsubscribe: not answered when the socket followed the session, not-found with the id when it did not', () => {
  const { index, fanout, socket, frames } = setup();
  const ws = socket('a');
  index.follow(ws, 's1', false);
  fanout.unsubscribe(ws, 's1', 'u1');
  expect(frames(ws)).toEqual([]);
  fanout.unsubscribe(ws, 's1', 'u2');
  expect(frames(ws)).toEqual([{ v: 1, type: 'error', id: 'u2', payload: { error: 'not-found', message: expect.any(String) } }]);
});

describe('an event that arrives after a newer one of its session', () => {
  test('sends no session frame, and is counted', async () => {
    const { index, metrics, socket, publish, frames } = setup();
    const ws = socket('a');
    index.follow(ws, 's1', true);
    const newer = sessionOf('s1', ['a', 'b', 'c']);
    publish({ session: newer, version: 3 });
    publish({ session: sessionOf('s1', ['a', 'b']), version: 2 });
    publish({ session: newer, version: 3 });
    expect(frames(ws)).toEqual([{ v: 1, type: 'session', payload: { session: newer } }]);
    expect((await metrics.lateEvents.get()).values[0]?.value).toBe(2);
    expect((await metrics.events.get()).values[0]?.value).toBe(3);
  });

  test('a late kick of a player the newest state seats again: the player keeps following, told nothing', () => {
    const { index, socket, publish, frames } = setup();
    const [k, h] = [socket('k'), socket('h')];
    index.follow(k, 's1', true);
    index.follow(h, 's1', true);
    const rejoined = sessionOf('s1', ['h', 'k']);
    publish({ session: rejoined, added: ['k'], version: 6 });
    publish({ session: sessionOf('s1', ['h']), removed: [{ playerId: 'k', reason: 'kicked' }], version: 5 });
    expect(frames(k)).toEqual([{ v: 1, type: 'session', payload: { session: rejoined } }]);
    expect(index.follows(k, 's1')).toBe(true);
    expect(frames(h)).toEqual([{ v: 1, type: 'session', payload: { session: rejoined } }]);
  });

  test('a late kick of a player the newest state does not seat: session-closed with its reason, and unfollowed', () => {
    const { index, socket, publish, frames } = setup();
    const [k, h] = [socket('k'), socket('h')];
    index.follow(k, 's1', true);
    index.follow(h, 's1', true);
    const readied = sessionOf('s1', ['h'], 'PREPARING_INSTANCE');
    publish({ session: readied, version: 6 });
    publish({ session: sessionOf('s1', ['h']), removed: [{ playerId: 'k', reason: 'kicked' }], version: 5 });
    expect(frames(k)).toEqual([
      { v: 1, type: 'session', payload: { session: readied } },
      { v: 1, type: 'session-closed', payload: { sessionId: 's1', reason: 'kicked' } },
    ]);
    expect(index.follows(k, 's1')).toBe(false);
    expect(frames(h)).toEqual([{ v: 1, type: 'session', payload: { session: readied } }]);
  });

  test('a late join of a player the newest state no longer seats: the player does not start following', () => {
    const { index, socket, publish, frames } = setup();
    const [j, h] = [socket('j'), socket('h')];
    index.follow(h, 's1', true);
    publish({ session: sessionOf('s1', ['h']), removed: [{ playerId: 'j', reason: 'kicked' }], version: 3 });
    publish({ session: sessionOf('s1', ['h', 'j']), added: ['j'], version: 2 });
    expect(frames(j)).toEqual([]);
    expect(index.follows(j, 's1')).toBe(false);
    expect(frames(h)).toEqual([{ v: 1, type: 'session', payload: { session: sessionOf('s1', ['h']) } }]);
  });

  test('a late join of a player the newest state seats: the player follows and gets the newest state, once per socket', () => {
    const { index, socket, publish, frames } = setup();
    const [phone, pc, watching, h] = [socket('j'), socket('j'), socket('j'), socket('h')];
    index.follow(h, 's1', true);
    index.follow(watching, 's1', false);
    const newest = sessionOf('s1', ['h', 'j'], 'PREPARING_INSTANCE');
    publish({ session: newest, version: 3 });
    publish({ session: sessionOf('s1', ['h', 'j']), added: ['j'], version: 2 });
    for (const ws of [phone, pc]) {
      expect(frames(ws)).toEqual([{ v: 1, type: 'session', payload: { session: newest } }]);
      expect(ws.seated).toEqual(['s1']);
    }
    // Already following (subscribed), it had the newest state: now a seat, and no repeat.
    expect(frames(watching)).toEqual([{ v: 1, type: 'session', payload: { session: newest } }]);
    expect(watching.seated).toEqual(['s1']);
    expect(frames(h)).toEqual([{ v: 1, type: 'session', payload: { session: newest } }]);
  });

  test('a late state of a lobby already closed by its last player does not close it again or follow anybody', () => {
    const { index, socket, publish, frames } = setup();
    const [l, w] = [socket('l'), socket('w')];
    index.follow(w, 's1', false);
    const closed = sessionOf('s1', []);
    publish({ session: closed, removed: [{ playerId: 'l', reason: 'left' }], version: 4 });
    publish({ session: sessionOf('s1', ['l']), added: ['l'], version: 3 });
    expect(frames(w)).toEqual([
      { v: 1, type: 'session', payload: { session: closed } },
      { v: 1, type: 'session-closed', payload: { sessionId: 's1', reason: 'deleted' } },
    ]);
    expect(frames(l)).toEqual([]);
    expect(index.followersOf('s1')).toBeUndefined();
  });

  test('an event without a version (an API of the release before) goes out as it comes', () => {
    const { index, fanout, socket, publish, frames } = setup();
    const ws = socket('a');
    index.follow(ws, 's1', true);
    publish({ session: sessionOf('s1', ['a', 'b']), version: 3 });
    const old = sessionOf('s1', ['a']);
    fanout.onSessionEvent(JSON.stringify({ environmentId: 1, session: old, removed: [], added: [], committedAt: Date.now() }));
    expect(frames(ws).at(-1)).toEqual({ v: 1, type: 'session', payload: { session: old } });
  });
});
