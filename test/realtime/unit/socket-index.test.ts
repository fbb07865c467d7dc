/** The socket index: sockets by player and by followed session, kept in step with each socket's own lists. */
import { SocketIndex } from '../../../apps/realtime/src/socket-index';
import { authorizedSocketOf } from './sockets';

function indexed(index: SocketIndex, playerId: string) {
  const ws = authorizedSocketOf(playerId);
  index.add(ws);
  return ws;
}

test('a player’s sockets: one, several, and what is left as they go', () => {
  const index = new SocketIndex();
  expect(index.socketsOf('p')).toEqual([]);
  const a = indexed(index, 'p');
  expect(index.socketsOf('p')).toEqual([a]);
  const b = indexed(index, 'p');
  const c = indexed(index, 'p');
  expect(index.socketsOf('p')).toEqual([a, b, c]);
  index.remove(b);
  expect(index.socketsOf('p')).toEqual([a, c]);
  index.remove(a);
  expect(index.socketsOf('p')).toEqual([c]);
  index.remove(c);
  expect(index.socketsOf('p')).toEqual([]);
  // The answer is a list of its own: closing sockets while walking it does not skip any.
  const d = indexed(index, 'q');
  const e = indexed(index, 'q');
  const walked = [];
  for (const ws of index.socketsOf('q')) {
    walked.push(ws);
    index.remove(ws);
  }
  expect(walked).toEqual([d, e]);
});

test('follow: seated and watched sessions, each followed once, both reaching the session’s followers', () => {
  const index = new SocketIndex();
  const a = indexed(index, 'pa');
  const b = indexed(index, 'pb');
  index.follow(a, 's1', true);
  index.follow(a, 's1', true);
  index.follow(b, 's1', false);
  index.follow(b, 's1', false);
  expect(a.seated).toEqual(['s1']);
  expect(b.watched).toEqual(['s1']);
  expect([...index.followersOf('s1')!]).toEqual([a, b]);
  expect(index.follows(a, 's1') && index.follows(b, 's1')).toBe(true);
  expect(index.follows(a, 's2')).toBe(false);
  expect(index.watchedCount(a)).toBe(0);
  expect(index.watchedCount(b)).toBe(1);
  expect(index.sessionsFollowed).toBe(1);
  // A seated session is not also watched.
  index.follow(a, 's1', false);
  expect(a.watched).toBeNull();
});

test('a watched session the player takes a seat in becomes seated and stops counting', () => {
  const index = new SocketIndex();
  const a = indexed(index, 'pa');
  index.follow(a, 's1', false);
  index.follow(a, 's2', false);
  expect(index.watchedCount(a)).toBe(2);
  index.follow(a, 's1', true);
  expect(a.seated).toEqual(['s1']);
  expect(a.watched).toEqual(['s2']);
  expect(index.watchedCount(a)).toBe(1);
  expect([...index.followersOf('s1')!]).toEqual([a]);
});

test('unfollow: answers whether the socket followed it; the last follower takes the session out', () => {
  const index = new SocketIndex();
  const a = indexed(index, 'pa');
  const b = indexed(index, 'pb');
  index.follow(a, 's1', true);
  index.follow(b, 's1', false);
  expect(index.unfollow(a, 's1')).toBe(true);
  expect(index.unfollow(a, 's1')).toBe(false);
  expect([...index.followersOf('s1')!]).toEqual([b]);
  expect(index.unfollow(b, 's1')).toBe(true);
  expect(index.followersOf('s1')).toBeUndefined();
  expect(index.sessionsFollowed).toBe(0);
  expect(index.unfollow(b, 'never')).toBe(false);
});

test('remove takes the socket out of every session it followed, and leaves the others', () => {
  const index = new SocketIndex();
  const a = indexed(index, 'pa');
  const b = indexed(index, 'pb');
  index.follow(a, 's1', true);
  index.follow(a, 's2', false);
  index.follow(b, 's2', true);
  index.remove(a);
  expect(a.seated).toBeNull();
  expect(a.watched).toBeNull();
  expect(index.followersOf('s1')).toBeUndefined();
  expect([...index.followersOf('s2')!]).toEqual([b]);
  expect(index.socketsOf('pa')).toEqual([]);
  expect(index.socketsOf('pb')).toEqual([b]);
  expect(index.sessionsFollowed).toBe(1);
});
