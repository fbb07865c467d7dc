/**
 * What a dashboard token reaches (spec §5 rule 2): GET /dashboard/session, GET /players and the four
 * config and flags reads, each needing its permission in the environment on every call, against the
 * members as they are now; every other route refuses it, and it is never taken for a player token.
 */
import { SignJWT } from 'jose';
import { DASHBOARD_TOKEN_AUDIENCE, DASHBOARD_TOKEN_TYP } from '@hearth/core/dashboards';
import { TOKEN_AUDIENCE } from '@hearth/core/auth';
import { removeManifest } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { NAMESPACE, gameConfig, project, standardManifests } from '../support/manifests';
import { accountIdOf, dashboardMember, dashboardSettings, mintDashboardToken } from '../support/dashboards';

let h: Harness;
const dashboard = dashboardSettings('https://idp.example');
const FULL = ['open_dashboard', 'view_players'];
const ada = (overrides: Record<string, unknown> = {}) =>
  dashboardMember('ada', { project: 'alpha', subject: 'ada', environments: [{ environment: 'alpha-live', permissions: FULL }], ...overrides });
const CONFIG_READS = ['/config/values', '/config/tables', '/config/tables/limits', '/flags'];

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      project('alpha', { dashboard }),
      project('plain', { services: { config: false, flags: false }, dashboard }),
      ada(),
      dashboardMember('opener', { project: 'alpha', subject: 'opener', environments: [{ environment: 'alpha-live', permissions: ['open_dashboard'] }] }),
      dashboardMember('plain-member', { project: 'plain', subject: 'p', environments: [{ environment: 'plain-live', permissions: FULL }] }),
      gameConfig('live-config', {
        environment: 'alpha-live',
        values: [{ key: 'speed', type: 'int', value: 3 }],
        tables: [{ key: 'limits', name: 'Limits', columns: [{ key: 'n', label: 'N', type: 'int' }], rows: [{ key: 'a', cells: { n: 1 } }] }],
        flags: [{ name: 'beta', enabled: true }],
      }),
      gameConfig('test-config', { environment: 'alpha-test', values: [{ key: 'only-in-test', type: 'int', value: 1 }] }),
    ],
  });
});
afterAll(async () => {
  await h?.close();
});

const token = (member = 'ada', appKey = 'alpha-live') => mintDashboardToken(h.core, h.db, member, appKey);

test('a dashboard token with open_dashboard reads config values, tables, one table and flags of its environment, with ETags', async () => {
  const t = await token();
  for (const path of CONFIG_READS) {
    const first = await call(h.base, 'GET', path, { token: t });
    expect({ path, status: first.status }).toEqual({ path, status: 200 });
    const again = await call(h.base, 'GET', path, { token: t, headers: { 'If-None-Match': first.headers.get('etag')! } });
    expect({ path, status: again.status }).toEqual({ path, status: 304 });
  }
  const values = await call(h.base, 'GET', '/config/values', { token: t });
  expect(values.body.items.map((row: { key: string }) => row.key)).toEqual(['speed']);
});

test('the config reads answer service-disabled where the project switched them off', async () => {
  const t = await token('plain-member', 'plain-live');
  for (const path of ['/config/values', '/flags']) expectError(await call(h.base, 'GET', path, { token: t }), 403, 'service-disabled');
});

test("every route but the dashboards' and the config reads refuses a dashboard token with forbidden", async () => {
  const t = await token();
  expectError(await call(h.base, 'GET', '/players/me', { token: t }), 403, 'forbidden');
  expectError(await call(h.base, 'POST', '/auth/server', { token: t, body: { subject: 'x' } }), 403, 'forbidden');
  expectError(await call(h.base, 'GET', '/legal/documents', { token: t }), 403, 'forbidden');
  expectError(await call(h.base, 'GET', '/realms', { token: t }), 403, 'forbidden');
});

test('a player token or a server key is forbidden on the dashboard routes', async () => {
  const server = h.serverKeys['alpha-live-key'];
  const player = (await signIn(h.base, server, 'some-player')).accessToken;
  for (const credential of [server, player]) {
    expectError(await call(h.base, 'GET', '/dashboard/session', { token: credential }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', '/players', { token: credential }), 403, 'forbidden');
  }
});

test('a dashboard token is never a player token, nor a player token a dashboard token', async () => {
  const t = await token();
  // As a refresh token: not one of the player tokens.
  expectError(await call(h.base, 'POST', '/auth/refresh', { body: { refreshToken: t } }), 401, 'unauthorized');
  const signer = h.core.tokens.currentSigner();
  const now = Math.floor(Date.now() / 1000);
  const sign = (typ: string, aud: string, claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA', kid: signer.kid, typ })
      .setAudience(aud)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .setJti('j'.repeat(22))
      .sign(signer.privateKey);
  const accountId = await accountIdOf(h.db, 'ada');
  // Our signature, a dashboard token's header, a player token's audience and claims: refused on the dashboard routes.
  const playerAudience = await sign(DASHBOARD_TOKEN_TYP, TOKEN_AUDIENCE, { sub: accountId, game: 'alpha-live', type: 'access' });
  expectError(await call(h.base, 'GET', '/dashboard/session', { token: playerAudience }), 401, 'unauthorized');
  // A dashboard token's audience under a player token's header: refused where player tokens go, and on the dashboard routes.
  const dashboardAudience = await sign('JWT', DASHBOARD_TOKEN_AUDIENCE, { sub: accountId, game: 'alpha-live', type: 'access' });
  expectError(await call(h.base, 'GET', '/players/me', { token: dashboardAudience }), 401, 'unauthorized');
  expectError(await call(h.base, 'GET', '/dashboard/session', { token: dashboardAudience }), 401, 'unauthorized');
  // The genuine article works, and an expired one does not.
  expect(
    (
      await call(h.base, 'GET', '/dashboard/session', {
        token: await sign(DASHBOARD_TOKEN_TYP, DASHBOARD_TOKEN_AUDIENCE, { sub: accountId, game: 'alpha-live' }),
      })
    ).status,
  ).toBe(200);
  const expired = await new SignJWT({ game: 'alpha-live' })
    .setProtectedHeader({ alg: 'EdDSA', kid: signer.kid, typ: DASHBOARD_TOKEN_TYP })
    .setAudience(DASHBOARD_TOKEN_AUDIENCE)
    .setSubject(accountId)
    .setIssuedAt(now - 4000)
    .setExpirationTime(now - 400)
    .setJti('e'.repeat(22))
    .sign(signer.privateKey);
  expectError(await call(h.base, 'GET', '/dashboard/session', { token: expired }), 401, 'unauthorized');
});

test('a permission the member lacks is forbidden: view_players for GET /players; the metrics count it', async () => {
  const t = await token('opener');
  expect((await call(h.base, 'GET', '/dashboard/session', { token: t })).status).toBe(200);
  expect((await call(h.base, 'GET', '/flags', { token: t })).status).toBe(200);
  expectError(await call(h.base, 'GET', '/players', { token: t }), 403, 'forbidden');
  const metrics = await (await fetch(h.api.metricsUrl!)).text();
  expect(metrics).toMatch(/hearth_credential_checks_total\{kind="dashboard",outcome="no-permission"\} [1-9]/);
  expect(metrics).toMatch(/hearth_credential_checks_total\{kind="dashboard",outcome="accepted"\} [1-9]/);
});

test('the members are read on every call: a permission taken away, a member disabled or removed is refused on the next call', async () => {
  await h.apply([ada()]);
  const t = await token();
  expect((await call(h.base, 'GET', '/players', { token: t })).status).toBe(200);

  await h.apply([ada({ environments: [{ environment: 'alpha-live', permissions: ['open_dashboard'] }] })]);
  expectError(await call(h.base, 'GET', '/players', { token: t }), 403, 'forbidden');
  const session = await call(h.base, 'GET', '/dashboard/session', { token: t });
  expect(session.body.permissions).toEqual(['open_dashboard']);

  await h.apply([ada({ disabled: true })]);
  for (const path of ['/dashboard/session', '/players', '/flags']) expectError(await call(h.base, 'GET', path, { token: t }), 403, 'forbidden');
  // Opened again, the same account: its token works again.
  await h.apply([ada()]);
  expect((await call(h.base, 'GET', '/players', { token: t })).status).toBe(200);

  // kubectl delete: the operator's finalizer removes the document's account.
  expect((await removeManifest(h.db, { kind: 'DashboardMember', namespace: NAMESPACE, name: 'ada' }, h.core.bus)).action).toBe('removed');
  for (const path of ['/dashboard/session', '/players', '/config/values']) expectError(await call(h.base, 'GET', path, { token: t }), 403, 'forbidden');
  // Made again it is another account: the old token stays refused.
  await h.apply([ada()]);
  expectError(await call(h.base, 'GET', '/dashboard/session', { token: t }), 403, 'forbidden');
  expect((await call(h.base, 'GET', '/dashboard/session', { token: await token() })).status).toBe(200);
});

test('a token acts only in its environment: the config of another environment of the project is not what it reads', async () => {
  await h.apply([
    ada({
      environments: [
        { environment: 'alpha-live', permissions: FULL },
        { environment: 'alpha-test', permissions: ['open_dashboard'] },
      ],
    }),
  ]);
  const live = await call(h.base, 'GET', '/config/values', { token: await token('ada', 'alpha-live') });
  const test = await call(h.base, 'GET', '/config/values', { token: await token('ada', 'alpha-test') });
  expect(live.body.items.map((row: { key: string }) => row.key)).toEqual(['speed']);
  expect(test.body.items.map((row: { key: string }) => row.key)).toEqual(['only-in-test']);
  // The alpha-test token holds only open_dashboard there.
  expectError(await call(h.base, 'GET', '/players', { token: await token('ada', 'alpha-test') }), 403, 'forbidden');
});

test('a project whose dashboard is switched off refuses its tokens', async () => {
  const t = await token();
  expect((await call(h.base, 'GET', '/dashboard/session', { token: t })).status).toBe(200);
  await h.apply([project('alpha', { dashboard: { ...dashboard, enabled: false } })]);
  try {
    expectError(await call(h.base, 'GET', '/dashboard/session', { token: t }), 403, 'forbidden');
  } finally {
    await h.apply([project('alpha', { dashboard })]);
  }
});

test('a DashboardMember naming an environment of another project, or none, is refused and changes nothing', async () => {
  await expect(
    h.apply([dashboardMember('stray', { project: 'alpha', subject: 's', environments: [{ environment: 'plain-live', permissions: FULL }] })]),
  ).rejects.toThrow(/spec\.environments\.0\.environment.*not of project "alpha"/);
  await expect(
    h.apply([dashboardMember('stray', { project: 'alpha', subject: 's', environments: [{ environment: 'nowhere', permissions: FULL }] })]),
  ).rejects.toThrow(/spec\.environments\.0\.environment/);
  await expect(h.apply([dashboardMember('stray', { project: 'alpha', environments: [{ environment: 'alpha-live', permissions: FULL }] })])).rejects.toThrow(
    /subject or email/,
  );
  expect(await h.db('dashboard_members').where({ manifest_name: 'stray' }).first()).toBeUndefined();
});
