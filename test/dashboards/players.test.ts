/**
 * GET /players for custom dashboards: an environment's players newest first, in pages, and the
 * search `q` (part of a display name without case; a player id or an identity subject exactly;
 * never an e-mail).
 */
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { project, standardManifests } from '../support/manifests';
import { dashboardMember, dashboardSettings, mintDashboardToken } from '../support/dashboards';
import { sleep } from '../support/wait';

let h: Harness;
let live: string;
let testEnvToken: string;
const made: Record<string, { id: string }> = {};

beforeAll(async () => {
  const dashboard = dashboardSettings('https://idp.example');
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      project('alpha', { dashboard }),
      dashboardMember('ada', {
        project: 'alpha',
        subject: 'ada',
        environments: [
          { environment: 'alpha-live', permissions: ['open_dashboard', 'view_players'] },
          { environment: 'alpha-test', permissions: ['open_dashboard', 'view_players'] },
        ],
      }),
    ],
  });
  live = await mintDashboardToken(h.core, h.db, 'ada', 'alpha-live');
  testEnvToken = await mintDashboardToken(h.core, h.db, 'ada', 'alpha-test');
  const key = h.serverKeys['alpha-live-key'];
  // Made one after another, so newest first is the reverse of this order.
  for (const [subject, name] of [
    ['sub-aurora', 'Aurora Borealis'],
    ['sub-boreal', 'boreal_wolf'],
    ['someone@mail.example', 'Mailed'],
    ['sub-percent', '100% Legit'],
    ['sub-nameless', undefined],
  ] as const) {
    made[subject] = (await signIn(h.base, key, subject, name)).player;
    await sleep(2); // wall time: the database stamps creation times itself, and the order follows them
  }
  made.other = (await signIn(h.base, h.serverKeys['alpha-test-key'], 'sub-aurora', 'Aurora of Test')).player;
});
afterAll(async () => {
  await h?.close();
});

const list = (query = '', token = live) => call(h.base, 'GET', `/players${query}`, { token });
const ids = (reply: { body: { items: { id: string }[] } }) => reply.body.items.map((p) => p.id);

test('newest first, with the entry the spec lists', async () => {
  const all = await list();
  expect(all.status).toBe(200);
  expect(ids(all)).toEqual(['sub-nameless', 'sub-percent', 'someone@mail.example', 'sub-boreal', 'sub-aurora'].map((s) => made[s].id));
  expect(all.body.next).toBeNull();
  const aurora = all.body.items.find((p: { id: string }) => p.id === made['sub-aurora'].id);
  expect(aurora).toEqual({
    id: made['sub-aurora'].id,
    displayName: 'Aurora Borealis',
    identities: [{ provider: 'server', subject: 'sub-aurora' }],
    hasGreenMindAccount: false,
    createdAt: expect.any(String),
    lastSeenAt: expect.any(String),
  });
});

test('pages follow their cursor; a cursor of another search is refused', async () => {
  const first = await list('?limit=2');
  expect(first.body.items).toHaveLength(2);
  const second = await list(`?limit=2&cursor=${encodeURIComponent(first.body.next)}`);
  const third = await list(`?limit=2&cursor=${encodeURIComponent(second.body.next)}`);
  expect(third.body.next).toBeNull();
  expect([...ids(first), ...ids(second), ...ids(third)]).toEqual(ids(await list()));
  expectError(await list(`?q=bor&cursor=${encodeURIComponent(first.body.next)}`), 400, 'invalid-request', 'query.cursor');
  expectError(await list('?limit=201'), 400, 'invalid-request', 'query.limit');
  expectError(await list('?email=x'), 400, 'invalid-request', 'query.email');
});

test("a search's pages follow their cursor: from the newest players, then through the indexes", async () => {
  const first = await list('?q=bor&limit=1');
  expect(ids(first)).toEqual([made['sub-boreal'].id]);
  const second = await list(`?q=bor&limit=1&cursor=${encodeURIComponent(first.body.next)}`);
  expect(ids(second)).toEqual([made['sub-aurora'].id]);
  expect(second.body.next).toBeNull();
});

test('q finds part of a display name at any position, whatever its case', async () => {
  expect(ids(await list('?q=BOREAL'))).toEqual([made['sub-boreal'].id, made['sub-aurora'].id]);
  expect(ids(await list('?q=ora%20bo'))).toEqual([made['sub-aurora'].id]);
  expect(ids(await list('?q=wolf'))).toEqual([made['sub-boreal'].id]);
  // LIKE's wildcards are letters here: % and _ match only themselves.
  expect(ids(await list('?q=%25'))).toEqual([made['sub-percent'].id]);
  expect(ids(await list('?q=l_w'))).toEqual([made['sub-boreal'].id]);
  expect(ids(await list('?q=l%25w'))).toEqual([]);
});

test("q finds a player's id or an identity's subject exactly, and not a part of them", async () => {
  expect(ids(await list(`?q=${made['sub-nameless'].id}`))).toEqual([made['sub-nameless'].id]);
  expect(ids(await list('?q=sub-nameless'))).toEqual([made['sub-nameless'].id]);
  expect(ids(await list(`?q=${made['sub-nameless'].id.slice(0, 10)}`))).toEqual([]);
  expect(ids(await list('?q=sub-namel'))).toEqual([]);
});

test('q never finds anybody by e-mail, even a subject that is an e-mail address', async () => {
  expect(ids(await list('?q=someone%40mail.example'))).toEqual([]);
  // The name is found as a name.
  expect(ids(await list('?q=mailed'))).toEqual([made['someone@mail.example'].id]);
});

test("each environment lists its own players only; another environment's player is not found by id", async () => {
  expect(ids(await list('', testEnvToken))).toEqual([made.other.id]);
  expect(ids(await list(`?q=${made.other.id}`))).toEqual([]);
  expect(ids(await list('?q=sub-aurora', testEnvToken))).toEqual([made.other.id]);
});

test('lastSeenAt moves with every sign-in and refresh; hasGreenMindAccount follows an identity-provider identity', async () => {
  const entry = async () => (await list('?q=sub-boreal')).body.items[0];
  const before = (await entry()).lastSeenAt as string;
  await sleep(5); // wall time: the database stamps lastSeenAt itself, to the millisecond as answered
  const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'sub-boreal');
  const afterSignIn = (await entry()).lastSeenAt as string;
  expect(Date.parse(afterSignIn)).toBeGreaterThan(Date.parse(before));
  await sleep(5); // wall time, as above
  expect((await call(h.base, 'POST', '/auth/refresh', { body: { refreshToken: tokens.refreshToken } })).status).toBe(200);
  expect(Date.parse((await entry()).lastSeenAt)).toBeGreaterThan(Date.parse(afterSignIn));

  // The player also signs in through the identity provider (the service's own accounts).
  const env = (await h.core.environments.byAppKey('alpha-live'))!;
  await h.db('player_identities').insert({ environment_id: env.id, provider: 'idp', subject: 'product-user-1', player_id: made['sub-boreal'].id });
  const linked = await entry();
  expect(linked.hasGreenMindAccount).toBe(true);
  expect(linked.identities).toEqual([
    { provider: 'idp', subject: 'product-user-1' },
    { provider: 'server', subject: 'sub-boreal' },
  ]);
  expect(ids(await list('?q=product-user-1'))).toEqual([made['sub-boreal'].id]);
});
