/**
 * The rate limits hold exactly (spec §8), in the `load-limited` environment whose plan allows a
 * credential LIMITED_PER_MINUTE requests a clock minute (loadtest/manifests.yaml), far below the
 * environment's minute, so the credential's limit is the nearest and its headers are the ones answered:
 *
 * - requests 1..N of a window are 200, each with X-RateLimit-Limit N, X-RateLimit-Remaining N - i
 *   (down by one per request) and X-RateLimit-Reset the seconds left in the clock minute;
 * - request N+1 is 429 `rate-limited` with Retry-After = details.retryAfterSeconds = the seconds left,
 *   Remaining 0; so is N+2 (a refused request is not counted, nor does it move the window);
 * - another player's token in the same environment is still served (the limit is per credential);
 * - after Retry-After seconds the first player is served again, with Remaining N - 1.
 *
 * Windows are clock minutes: the burst starts only with at least 10 s of its minute left (else it
 * waits for the next minute), so all N+2 requests fall in one window.
 */
import { sleep } from 'k6';
import { LIMITED_PER_MINUTE, LIMITED_SERVER_KEY, Response, call, checkTagged, hasRateLimitHeaders, json, signInOrThrow } from './api.ts';

const ENDPOINT = 'rate-limited-players-me';

/** The seconds the server answers as X-RateLimit-Reset at `ms`: to the end of its clock minute (1-60). */
function secondsLeftInMinute(ms: number): number {
  return 60 - (Math.floor(ms / 1000) % 60);
}

/** GET /players/me, with the Reset the clock allows for it (the second may turn during the request). */
function me(token: string, expect: number[]): { res: Response; resets: number[] } {
  const before = Date.now();
  const res = call(ENDPOINT, 'GET', 'GET /players/me', '/players/me', { token, expect });
  const resets = [secondsLeftInMinute(before), secondsLeftInMinute(Date.now())];
  return { res, resets };
}

const header = (res: Response, name: string): number => Number(res.headers[name]);

export function rateLimit(): void {
  const limit = LIMITED_PER_MINUTE;
  const stamp = Date.now().toString(36);
  const first = signInOrThrow(LIMITED_SERVER_KEY, `limited-a-${stamp}`);
  const second = signInOrThrow(LIMITED_SERVER_KEY, `limited-b-${stamp}`);

  const msLeft = 60_000 - (Date.now() % 60_000);
  if (msLeft < 10_000) sleep(msLeft / 1000 + 0.2);
  const minuteAtStart = Math.floor(Date.now() / 60_000);

  for (let i = 1; i <= limit; i++) {
    const { res, resets } = me(first.accessToken, [200]);
    checkTagged(ENDPOINT, res, {
      'rate limit: requests 1..N of the window are 200': (r) => r.status === 200,
      'rate limit: requests 1..N answer X-RateLimit-Limit N': (r) => header(r, 'X-Ratelimit-Limit') === limit,
      'rate limit: request i answers X-RateLimit-Remaining N - i': (r) => header(r, 'X-Ratelimit-Remaining') === limit - i,
      'rate limit: X-RateLimit-Reset is the seconds left in the clock minute': (r) => resets.includes(header(r, 'X-Ratelimit-Reset')),
    });
  }

  for (let n = 0; n < 2; n++) {
    const { res, resets } = me(first.accessToken, [429]);
    const body = json(res);
    checkTagged(ENDPOINT, res, {
      'rate limit: requests N+1 and N+2 are 429 rate-limited': (r) => r.status === 429 && body?.error === 'rate-limited',
      'rate limit: a 429 has Retry-After = details.retryAfterSeconds = seconds left in the minute': (r) =>
        resets.includes(header(r, 'Retry-After')) && body?.details?.retryAfterSeconds === header(r, 'Retry-After'),
      'rate limit: a 429 answers X-RateLimit-Remaining 0, Limit N and Reset = Retry-After': (r) =>
        header(r, 'X-Ratelimit-Remaining') === 0 && header(r, 'X-Ratelimit-Limit') === limit && header(r, 'X-Ratelimit-Reset') === header(r, 'Retry-After'),
    });
  }
  checkTagged(ENDPOINT, minuteAtStart, { 'rate limit: the burst fell in one clock minute': (m) => m === Math.floor(Date.now() / 60_000) });

  // The limit is the credential's: another player of the same environment is served, counted from N.
  const other = me(second.accessToken, [200]).res;
  checkTagged(ENDPOINT, other, {
    'rate limit: another credential of the environment is still served, Remaining N - 1': (r) =>
      r.status === 200 && header(r, 'X-Ratelimit-Remaining') === limit - 1,
  });

  // Wait out the window the last refusal named; the next request opens a fresh one.
  const last = me(first.accessToken, [429]).res;
  const retryAfter = header(last, 'Retry-After');
  checkTagged(ENDPOINT, last, { 'rate limit: still refused until the window ends': (r) => r.status === 429 && retryAfter >= 1 && retryAfter <= 60 });
  sleep((60_000 - (Date.now() % 60_000)) / 1000 + 0.2);
  const after = me(first.accessToken, [200]).res;
  checkTagged(ENDPOINT, after, {
    'rate limit: served again in the next minute, Remaining N - 1 (refusals were not counted)': (r) =>
      r.status === 200 && header(r, 'X-Ratelimit-Remaining') === limit - 1 && hasRateLimitHeaders(r),
  });
}
