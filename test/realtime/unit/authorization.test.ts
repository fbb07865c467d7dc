/**
 * The decisions of authorize that need no socket: who may hold one (refusalOf) and which sessions a
 * player's socket starts with when sessions changed during the read (seatedNow; which states are
 * newest is SessionStates', test/realtime/unit/session-states.test.ts). The whole exchange is
 * tested against a real server in test/realtime/socket.test.ts and fanout.test.ts.
 */
import type { PlayerTokenClaims, Principal } from '@hearth/core/auth';
import { refusalOf, seatedNow } from '../../../apps/realtime/src/authorization';
import { environmentOf, sessionOf } from './sockets';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

function player(overrides: { exp?: number; review?: 'approved' | 'suspended' | 'pending'; sessions?: boolean } = {}): Principal {
  const claims: PlayerTokenClaims = {
    aud: 'hearth',
    type: 'access',
    game: 'env-1',
    sub: 'p1',
    iat: NOW / 1000 - 60,
    exp: overrides.exp ?? NOW / 1000 + 3600,
    jti: 'j',
  };
  return { kind: 'player', playerId: 'p1', claims, environment: environmentOf(1, overrides) };
}

describe('refusalOf', () => {
  test('a valid player token of an approved project with sessions switched on may hold a socket', () => {
    expect(refusalOf(player(), NOW)).toBeNull();
  });

  test('no principal, a server key, an expired token: unauthorized', () => {
    expect(refusalOf(null, NOW)?.code).toBe('unauthorized');
    expect(refusalOf({ kind: 'server', keyId: 'k', environment: environmentOf(1) }, NOW)?.code).toBe('unauthorized');
    expect(refusalOf(player({ exp: NOW / 1000 }), NOW)?.code).toBe('unauthorized');
    expect(refusalOf(player({ exp: NOW / 1000 + 1 }), NOW)).toBeNull();
  });

  test('the review and the sessions switch, as the API checks them', () => {
    expect(refusalOf(player({ review: 'suspended' }), NOW)?.code).toBe('project-not-approved');
    expect(refusalOf(player({ review: 'pending' }), NOW)?.code).toBe('project-not-approved');
    expect(refusalOf(player({ sessions: false }), NOW)?.code).toBe('service-disabled');
  });
});

describe('seatedNow', () => {
  test('with nothing changed meanwhile, the sessions listed', () => {
    const listed = [sessionOf('a', ['p1']), sessionOf('b', ['x', 'p1'])];
    expect(seatedNow(listed, [], 'p1')).toEqual(listed);
  });

  test('a seat taken during the read is added; a seat given up is dropped; the newest states replace the listed ones', () => {
    const listed = [sessionOf('a', ['p1']), sessionOf('b', ['x', 'p1'])];
    const changed = [
      sessionOf('c', ['y', 'p1']), // joined c
      sessionOf('b', ['x']), // left b
      sessionOf('a', ['p1', 'z'], 'PREPARING_INSTANCE'), // somebody joined a, then all readied
    ];
    expect(seatedNow(listed, changed, 'p1')).toEqual([sessionOf('a', ['p1', 'z'], 'PREPARING_INSTANCE'), sessionOf('c', ['y', 'p1'])]);
  });

  test('sessions the player has nothing to do with are passed over', () => {
    const listed = [sessionOf('a', ['p1'])];
    expect(seatedNow(listed, [sessionOf('e', ['q'])], 'p1')).toEqual(listed);
  });
});
