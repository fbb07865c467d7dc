/**
 * Fan-out of one session event to the sockets of one process: who gets `session`, who gets
 * `session-closed`, who starts following, with the frame serialised once. Sockets are HearthSocket
 * objects without a connection; what the server would send is recorded by a host of the test's own.
 * Across processes and the API, the same is tested in test/realtime/fanout.test.ts.
 */
import { createLogger } from '@hearth/core';
import type { SessionEvent } from '@hearth/core/sessions';
import { RealtimeMetrics, type HearthSocket, type SocketHost } from '@hearth/realtime';
import { Fanout } from '../../../apps/realtime/src/fanout';
import { RecentEvents } from '../../../apps/realtime/src/recent-events';
import { SocketIndex } from '../../../apps/realtime/src/socket-index';
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
    recent: new RecentEvents(),
    host,
    metrics,
    log: createLogger('silent'),
  });
  const socket = (playerId: string, environmentId = 1) => {
    const ws = authorizedSocketOf(playerId, environmentOf(environmentId));
    index.add(ws);
    return ws;
  };
  const publish = (event: Partial<SessionEvent> & Pick<SessionEvent, 'session'>) =>
    fanout.onSessionEvent(JSON.stringify({ environmentId: 1, removed: [], added: [], committedAt: Date.now(), ...event }));
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
