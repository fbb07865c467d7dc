/**
 * POST /auth/dashboard against a real OpenID Connect provider (oidc-provider, test/support), and the
 * token it answers at GET /dashboard/session.
 */
import { randomBytes } from 'node:crypto';
import { projectSecretPublicKey, sealProjectSecret, storeProjectSecret } from '@hearth/core/tenancy';
import { secretVariableOf } from '@hearth/core/dashboards';
import { type Harness, startApiInstance, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { NAMESPACE, environment, project, standardManifests } from '../support/manifests';
import { OidcProviderStandIn } from '../support/oidc-provider';
import { DASHBOARD_CLIENT, accountIdOf, dashboardMember, dashboardSettings } from '../support/dashboards';

let h: Harness;
let idp: OidcProviderStandIn;
const SECRET_VARIABLE = secretVariableOf(NAMESPACE, { name: 'dashboard-oidc', key: 'client-secret' });

const FULL = ['open_dashboard', 'view_players'];

beforeAll(async () => {
  idp = await OidcProviderStandIn.start([
    { client_id: DASHBOARD_CLIENT.clientId, client_secret: DASHBOARD_CLIENT.clientSecret, redirect_uris: [DASHBOARD_CLIENT.redirectUri] },
  ]);
  process.env[SECRET_VARIABLE] = DASHBOARD_CLIENT.clientSecret;
  await idp.setAccounts({
    ada: { email: 'ada@studio.example', email_verified: true },
    bob: { email: 'bob@studio.example', email_verified: true },
    eve: { email: 'eve@studio.example', email_verified: false },
    carl: { email: 'carl@studio.example', email_verified: true },
    dora: {},
    stranger: { email: 'stranger@elsewhere.example', email_verified: true },
  });
  const settings = dashboardSettings(idp.issuer);
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      project('alpha', { dashboard: settings }),
      project('pending', { review: 'pending', dashboard: settings }),
      project('beta', { dashboard: settings }),
      environment('beta-live', 'beta'),
      dashboardMember('ada', {
        project: 'alpha',
        subject: 'ada',
        environments: [
          { environment: 'alpha-live', permissions: FULL },
          { environment: 'alpha-test', permissions: ['open_dashboard'] },
        ],
      }),
      // Known by the e-mail the provider asserts, verified.
      dashboardMember('bob', { project: 'alpha', email: 'BOB@studio.example', environments: [{ environment: 'alpha-live', permissions: ['open_dashboard'] }] }),
      // Named by an e-mail the provider does not assert as verified.
      dashboardMember('eve', { project: 'alpha', email: 'eve@studio.example', environments: [{ environment: 'alpha-live', permissions: FULL }] }),
      dashboardMember('carl', { project: 'alpha', subject: 'carl', disabled: true, environments: [{ environment: 'alpha-live', permissions: FULL }] }),
      // May view players in alpha-live but not open the dashboard there.
      dashboardMember('dora', {
        project: 'alpha',
        subject: 'dora',
        environments: [
          { environment: 'alpha-live', permissions: ['view_players'] },
          { environment: 'alpha-test', permissions: ['open_dashboard'] },
        ],
      }),
      dashboardMember('pat', { project: 'pending', subject: 'ada', environments: [{ environment: 'pending-live', permissions: FULL }] }),
    ],
  });
});
afterAll(async () => {
  delete process.env[SECRET_VARIABLE];
  await h?.close();
  await idp?.stop();
});

const codeFor = (subject: string, extra: { nonce?: string; codeVerifier?: string } = {}) =>
  idp.authorize({ subject, clientId: DASHBOARD_CLIENT.clientId, redirectUri: DASHBOARD_CLIENT.redirectUri, ...extra });

const signIn = (body: Record<string, unknown>, base = h.base) => call(base, 'POST', '/auth/dashboard', { body });

test('a member signs in with a code, its verifier and nonce, and the token opens their session', async () => {
  const grant = await codeFor('ada');
  const signed = await signIn({ appKey: 'alpha-live', ...grant });
  expect(signed.status).toBe(200);
  expect(signed.body).toEqual({ accessToken: expect.any(String), expiresIn: 3600, appKey: 'alpha-live', permissions: FULL });
  const claims = JSON.parse(Buffer.from(signed.body.accessToken.split('.')[1], 'base64url').toString());
  expect(claims.exp - claims.iat).toBe(3600);

  const session = await call(h.base, 'GET', '/dashboard/session', { token: signed.body.accessToken });
  expect(session.status).toBe(200);
  expect(session.body).toEqual({ appKey: 'alpha-live', account: { id: await accountIdOf(h.db, 'ada') }, permissions: FULL });
});

test('the permissions are those of the environment signed in to', async () => {
  const signed = await signIn({ appKey: 'alpha-test', ...(await codeFor('ada')) });
  expect(signed.status).toBe(200);
  expect(signed.body.permissions).toEqual(['open_dashboard']);
  expect(signed.body.appKey).toBe('alpha-test');
});

test('a member named by e-mail signs in when the provider asserts that e-mail verified (any case), and not otherwise', async () => {
  const bob = await signIn({ appKey: 'alpha-live', ...(await codeFor('bob')) });
  expect(bob.status).toBe(200);
  expect(bob.body.permissions).toEqual(['open_dashboard']);
  expectError(await signIn({ appKey: 'alpha-live', ...(await codeFor('eve')) }), 403, 'forbidden');
});

test('a code works once: used again it is unauthorized', async () => {
  const grant = await codeFor('ada');
  expect((await signIn({ appKey: 'alpha-live', ...grant })).status).toBe(200);
  expectError(await signIn({ appKey: 'alpha-live', ...grant }), 401, 'unauthorized');
});

test('a code for another sign-in is unauthorized: another nonce, another verifier, a made-up code', async () => {
  const forNonce = await codeFor('ada');
  const wrongNonce = expectError(await signIn({ appKey: 'alpha-live', ...forNonce, nonce: randomBytes(16).toString('base64url') }), 401, 'unauthorized');
  expect(wrongNonce.message).toMatch(/nonce/);
  const forVerifier = await codeFor('ada');
  expectError(await signIn({ appKey: 'alpha-live', ...forVerifier, codeVerifier: randomBytes(32).toString('base64url') }), 401, 'unauthorized');
  const real = await codeFor('ada');
  expectError(await signIn({ appKey: 'alpha-live', ...real, code: 'not-a-code-the-provider-issued' }), 401, 'unauthorized');
});

test('somebody the project does not know, a closed account, or one without open_dashboard there is forbidden', async () => {
  expectError(await signIn({ appKey: 'alpha-live', ...(await codeFor('stranger')) }), 403, 'forbidden');
  expectError(await signIn({ appKey: 'alpha-live', ...(await codeFor('carl')) }), 403, 'forbidden');
  expectError(await signIn({ appKey: 'alpha-live', ...(await codeFor('dora')) }), 403, 'forbidden');
  // dora may open alpha-test.
  expect((await signIn({ appKey: 'alpha-test', ...(await codeFor('dora')) })).status).toBe(200);
});

test("a member of one project is forbidden in another project's environment", async () => {
  expectError(await signIn({ appKey: 'beta-live', ...(await codeFor('ada')) }), 403, 'forbidden');
});

test('not-found where the project has no dashboard or no environment has the app key; the code is not spent', async () => {
  const grant = await codeFor('ada');
  // Each names the app key asked for and the body field that held it.
  expect(expectError(await signIn({ appKey: 'plain-live', ...grant }), 404, 'not-found', 'body.appKey').message).toBe(
    'The project of app key "plain-live" has no dashboard.',
  );
  expect(expectError(await signIn({ appKey: 'no-such-app', ...grant }), 404, 'not-found', 'body.appKey').message).toBe(
    'No environment has the app key "no-such-app".',
  );
  expect((await signIn({ appKey: 'alpha-live', ...grant })).status).toBe(200);
});

test('a project awaiting review is project-not-approved', async () => {
  expectError(await signIn({ appKey: 'pending-live', ...(await codeFor('ada')) }), 403, 'project-not-approved');
});

test('503 unavailable where the deployment hosts no custom dashboards', async () => {
  const other = await startApiInstance({
    db: h.db,
    redisPrefix: h.redisPrefix,
    masterKey: h.masterKey,
    dashboards: { hosted: false, secrets: { read: async () => undefined } },
  });
  try {
    expectError(await signIn({ appKey: 'alpha-live', ...(await codeFor('ada')) }, other.base), 503, 'unavailable');
  } finally {
    await other.stop();
  }
});

test("503 unavailable when the dashboard's client secret is not on this deployment, or is wrong", async () => {
  const missing = await startApiInstance({
    db: h.db,
    redisPrefix: h.redisPrefix,
    masterKey: h.masterKey,
    dashboards: { hosted: true, secrets: { read: async () => undefined } },
  });
  const wrong = await startApiInstance({
    db: h.db,
    redisPrefix: h.redisPrefix,
    masterKey: h.masterKey,
    dashboards: { hosted: true, secrets: { read: async () => 'not-the-secret' } },
  });
  try {
    expectError(await signIn({ appKey: 'alpha-live', ...(await codeFor('ada')) }, missing.base), 503, 'unavailable');
    expectError(await signIn({ appKey: 'alpha-live', ...(await codeFor('ada')) }, wrong.base), 503, 'unavailable');
  } finally {
    await missing.stop();
    await wrong.stop();
  }
});

test('the body is held to the spec: verifier grammar and lengths, nonce length, no other field', async () => {
  const grant = await codeFor('ada');
  expectError(await signIn({ appKey: 'alpha-live', ...grant, codeVerifier: 'short' }), 400, 'invalid-request', 'body.codeVerifier');
  expectError(await signIn({ appKey: 'alpha-live', ...grant, codeVerifier: `${'a'.repeat(42)}!` }), 400, 'invalid-request', 'body.codeVerifier');
  expectError(await signIn({ appKey: 'alpha-live', ...grant, nonce: 'too-short' }), 400, 'invalid-request', 'body.nonce');
  expectError(await signIn({ appKey: 'alpha-live', ...grant, code: 'c'.repeat(2049) }), 400, 'invalid-request', 'body.code');
  expectError(await signIn({ appKey: 'alpha-live', ...grant, state: 'x' }), 400, 'invalid-request', 'body.state');
  // None of those spent the code.
  expect((await signIn({ appKey: 'alpha-live', ...grant })).status).toBe(200);
});

test("the client secret the operator carried from the Project's Secret, sealed, is used; the API's files and variables are the fallback", async () => {
  const nothingElse = await startApiInstance({
    db: h.db,
    redisPrefix: h.redisPrefix,
    masterKey: h.masterKey,
    dashboards: { hosted: true, secrets: { read: async () => undefined } },
  });
  const project = { namespace: NAMESPACE, name: 'alpha' };
  const publicKey = (await projectSecretPublicKey(h.db))!;
  const store = (secret: string, origin: string) =>
    storeProjectSecret(h.db, project, 'dashboardClientSecret', { origin, seal: () => sealProjectSecret(publicKey, secret) });
  try {
    expect(await store(DASHBOARD_CLIENT.clientSecret, 'uid/1/client-secret')).toBe(true);
    const sealed = (await h.db('projects').where(project).first('dashboard_client_secret')).dashboard_client_secret as string;
    expect(sealed).not.toContain(DASHBOARD_CLIENT.clientSecret);
    expect(Buffer.from(sealed.split('.').slice(1).join(''), 'base64url').toString('latin1')).not.toContain(DASHBOARD_CLIENT.clientSecret);
    expect((await signIn({ appKey: 'alpha-live', ...(await codeFor('ada')) }, nothingElse.base)).status).toBe(200);
    // The same origin is not sealed again; another one replaces it (a rotated Secret).
    expect(await store('not-the-secret', 'uid/1/client-secret')).toBe(false);
    expect(await store('not-the-secret', 'uid/2/client-secret')).toBe(true);
    expectError(await signIn({ appKey: 'alpha-live', ...(await codeFor('ada')) }, nothingElse.base), 503, 'unavailable');
  } finally {
    await storeProjectSecret(h.db, project, 'dashboardClientSecret', null);
    await nothingElse.stop();
  }
  // With none stored, this API's variable serves again.
  expect((await signIn({ appKey: 'alpha-live', ...(await codeFor('ada')) })).status).toBe(200);
});

test('an issuer over plain http that is not on this machine is not asked: 503 unavailable', async () => {
  await h.apply([project('beta', { dashboard: dashboardSettings('http://idp.example') })]);
  try {
    const refused = expectError(
      await signIn({ appKey: 'beta-live', code: 'any-code', codeVerifier: 'v'.repeat(43), nonce: 'n'.repeat(16) }),
      503,
      'unavailable',
    );
    expect(refused.message).toMatch(/HTTPS/);
  } finally {
    await h.apply([project('beta', { dashboard: dashboardSettings(idp.issuer) })]);
  }
});
