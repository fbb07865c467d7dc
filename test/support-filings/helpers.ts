/** Shared by the support filing tests: players, filings and what the database holds of them. */
import type { Harness } from '../support/harness';
import { call, signIn, type Reply } from '../support/http';
import { standardManifests, projectWithout } from '../support/manifests';

export interface TestPlayer {
  id: string;
  token: string;
}

let counter = 0;

/** The usual fixture plus `quiet`, a project that has not switched support on. */
export function supportManifests() {
  return [...standardManifests(), ...projectWithout('quiet', 'support')];
}

export async function newPlayer(h: Harness, keyName = 'alpha-live-key'): Promise<TestPlayer> {
  const subject = `sf-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
  const tokens = await signIn(h.base, h.serverKeys[keyName], subject);
  return { id: tokens.player.id, token: tokens.accessToken };
}

export const aRequest = { subject: 'Lost my sword', message: 'It vanished after the last patch.' };

export function fileRequest(h: Harness, p: TestPlayer, body: Record<string, unknown> = aRequest, base = h.base): Promise<Reply> {
  return call(base, 'POST', '/support/requests', { token: p.token, body });
}

export function fileReport(h: Harness, p: TestPlayer, body: Record<string, unknown>, base = h.base): Promise<Reply> {
  return call(base, 'POST', '/support/reports', { token: p.token, body });
}

/** Everything stored that `playerId` filed, oldest first. */
export function filingsOf(h: Harness, playerId: string): Promise<Record<string, any>[]> {
  return h
    .db('support_filings')
    .where({ player_id: playerId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
}

export function rateHeaders(reply: Reply) {
  return {
    limit: Number(reply.headers.get('x-ratelimit-limit')),
    remaining: Number(reply.headers.get('x-ratelimit-remaining')),
    reset: Number(reply.headers.get('x-ratelimit-reset')),
  };
}

/** The database clock's seconds until the current clock hour ends (the filing limit's window). */
export async function secondsLeftInHour(h: Harness): Promise<number> {
  const { rows } = await h.db.raw('SELECT extract(epoch FROM now())::float8 AS now');
  const now = Math.floor(rows[0].now);
  return 3600 - (now % 3600);
}

/** Waits out the last minute of a clock hour, so a test's filings all fall in one window. */
export async function awayFromHourEnd(h: Harness, margin = 60): Promise<void> {
  const left = await secondsLeftInHour(h);
  if (left <= margin) await new Promise((resolve) => setTimeout(resolve, (left + 1) * 1000));
}
