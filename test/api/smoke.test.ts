import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

test('a server key signs a player in and the token reads /players/me', async () => {
  const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'smoke-1', 'Smoke');
  const me = await call(h.base, 'GET', '/players/me', { token: tokens.accessToken });
  expect(me.status).toBe(200);
  expect(me.body).toEqual(tokens.player);
});

test('an unknown path is 404 not-found', async () => {
  expectError(await call(h.base, 'GET', '/nope'), 404, 'not-found');
});
