/**
 * Support requests and player reports (spec §4 Support): what is stored, every field's rules (trim,
 * lengths in characters, email), reports of players of other environments and of oneself, the
 * credential and service switch, and what a player's deletion does to filings.
 */
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { type TestPlayer, aRequest, fileReport, fileRequest, filingsOf, newPlayer, supportManifests } from './helpers';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ manifests: supportManifests() });
});
afterAll(async () => {
  await h.close();
});

async function envId(appKey: string): Promise<number> {
  return (await h.core.environments.byAppKey(appKey))!.id;
}

describe('POST /support/requests', () => {
  test('201 { id }; stored trimmed with its environment, player and time', async () => {
    const p = await newPlayer(h);
    const before = Date.now();
    const reply = await fileRequest(h, p, { subject: '  Lost my sword  ', message: '\n It vanished after the patch. \t', contactEmail: 'mia@example.com' });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.body)).toEqual(['id']);
    const [row] = await filingsOf(h, p.id);
    expect(row).toMatchObject({
      id: reply.body.id,
      kind: 'request',
      environment_id: String(await envId('alpha-live')),
      player_id: p.id,
      subject: 'Lost my sword',
      message: 'It vanished after the patch.',
      contact_email: 'mia@example.com',
      reported_player_id: null,
      reason: null,
      details: null,
    });
    expect(new Date(row.created_at).getTime()).toBeGreaterThanOrEqual(before - 2000);
    expect(new Date(row.created_at).getTime()).toBeLessThanOrEqual(Date.now() + 2000);
  });

  test('contactEmail is optional', async () => {
    const p = await newPlayer(h);
    expect((await fileRequest(h, p, aRequest)).status).toBe(201);
    expect((await filingsOf(h, p.id))[0].contact_email).toBeNull();
  });

  test('lengths count characters after trimming, at both ends of each range', async () => {
    const p = await newPlayer(h);
    const accepted = [
      { subject: 'abc', message: 'x'.repeat(10) },
      { subject: 'a'.repeat(120), message: 'x'.repeat(5000) },
      // Emoji are one character each (two UTF-16 units): still within 3-120 and 10-5000.
      { subject: '😀'.repeat(120), message: '🎮'.repeat(10) },
      { subject: `  ${'a'.repeat(120)}  `, message: `   ${'x'.repeat(10)}   ` },
    ];
    for (const body of accepted) expect({ body, status: (await fileRequest(h, p, body)).status }).toEqual({ body, status: 201 });
    expect((await filingsOf(h, p.id)).map((r) => [r.subject.length, r.message.length])).toEqual([
      [3, 10],
      [120, 5000],
      [240, 20], // UTF-16 units as JavaScript counts them: 120 and 10 characters
      [120, 10],
    ]);
  });

  test.each([
    ['a missing subject', { message: aRequest.message }, 'body.subject'],
    ['a subject of two characters after trimming', { ...aRequest, subject: '  ab  ' }, 'body.subject'],
    ['a blank subject', { ...aRequest, subject: '     ' }, 'body.subject'],
    ['a subject of 121 characters', { ...aRequest, subject: 'a'.repeat(121) }, 'body.subject'],
    ['a subject that is not a string', { ...aRequest, subject: 42 }, 'body.subject'],
    ['a missing message', { subject: aRequest.subject }, 'body.message'],
    ['a message of nine characters after trimming', { ...aRequest, message: '  123456789  ' }, 'body.message'],
    ['a message of 5001 characters', { ...aRequest, message: 'x'.repeat(5001) }, 'body.message'],
    ['a contactEmail that is no address', { ...aRequest, contactEmail: 'not-an-email' }, 'body.contactEmail'],
    [
      'a contactEmail of 255 characters',
      { ...aRequest, contactEmail: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}` },
      'body.contactEmail',
    ],
    ['a null contactEmail', { ...aRequest, contactEmail: null }, 'body.contactEmail'],
    ['an unknown field', { ...aRequest, priority: 'high' }, 'body.priority'],
  ])('%s is invalid-request naming the field, and nothing is stored', async (_name, body, field) => {
    const p = await newPlayer(h);
    expectError(await fileRequest(h, p, body as Record<string, unknown>), 400, 'invalid-request', field);
    expect(await filingsOf(h, p.id)).toEqual([]);
  });

  test('a contactEmail of exactly 254 characters is taken', async () => {
    const p = await newPlayer(h);
    const email = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(email).toHaveLength(254);
    expect((await fileRequest(h, p, { ...aRequest, contactEmail: email })).status).toBe(201);
    expect((await filingsOf(h, p.id))[0].contact_email).toBe(email);
  });
});

describe('POST /support/reports', () => {
  let reporter: TestPlayer;
  let reported: TestPlayer;

  beforeAll(async () => {
    reporter = await newPlayer(h);
    reported = await newPlayer(h);
  });

  test('201 { id }; stored trimmed with the reported player', async () => {
    const p = await newPlayer(h);
    const reply = await fileReport(h, p, { playerId: reported.id, reason: '  cheating ', details: '  Wall hacks in round 3.  ' });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.body)).toEqual(['id']);
    const [row] = await filingsOf(h, p.id);
    expect(row).toMatchObject({
      id: reply.body.id,
      kind: 'report',
      environment_id: String(await envId('alpha-live')),
      player_id: p.id,
      reported_player_id: reported.id,
      reason: 'cheating',
      details: 'Wall hacks in round 3.',
      subject: null,
      message: null,
      contact_email: null,
    });
  });

  test('details are optional, may be empty after trimming, and take up to 2000 characters', async () => {
    const p = await newPlayer(h);
    for (const body of [
      { playerId: reported.id, reason: 'ab' },
      { playerId: reported.id, reason: 'r'.repeat(60), details: '   ' },
      { playerId: reported.id, reason: 'spam', details: ` ${'d'.repeat(2000)} ` },
    ]) {
      expect((await fileReport(h, p, body)).status).toBe(201);
    }
    expect((await filingsOf(h, p.id)).map((r) => [r.reason.length, r.details === null ? null : r.details.length])).toEqual([
      [2, null],
      [60, 0],
      [4, 2000],
    ]);
  });

  test.each([
    ['a missing playerId', { reason: 'spam' }, 'body.playerId'],
    ['an empty playerId', { playerId: '', reason: 'spam' }, 'body.playerId'],
    ['a playerId of 65 characters', { playerId: 'p'.repeat(65), reason: 'spam' }, 'body.playerId'],
    ['a missing reason', { playerId: 'PLAYER' }, 'body.reason'],
    ['a reason of one character after trimming', { playerId: 'PLAYER', reason: '  x  ' }, 'body.reason'],
    ['a reason of 61 characters', { playerId: 'PLAYER', reason: 'r'.repeat(61) }, 'body.reason'],
    ['details of 2001 characters', { playerId: 'PLAYER', reason: 'spam', details: 'd'.repeat(2001) }, 'body.details'],
    ['an unknown field', { playerId: 'PLAYER', reason: 'spam', severity: 3 }, 'body.severity'],
  ])('%s is invalid-request naming the field, and nothing is stored', async (_name, body, field) => {
    const p = await newPlayer(h);
    const sent = { ...body } as Record<string, unknown>;
    if (sent.playerId === 'PLAYER') sent.playerId = reported.id;
    expectError(await fileReport(h, p, sent), 400, 'invalid-request', field);
    expect(await filingsOf(h, p.id)).toEqual([]);
  });

  test('reporting oneself is invalid-request naming body.playerId', async () => {
    const reply = await fileReport(h, reporter, { playerId: reporter.id, reason: 'testing' });
    expectError(reply, 400, 'invalid-request', 'body.playerId');
    expect(await filingsOf(h, reporter.id)).toEqual([]);
  });

  test('an unknown player, and a player of another environment (same project or another), are not-found', async () => {
    const sameProject = await newPlayer(h, 'alpha-test-key');
    const otherProject = await newPlayer(h, 'plain-live-key');
    for (const playerId of ['nobody-at-all', sameProject.id, otherProject.id]) {
      expectError(await fileReport(h, reporter, { playerId, reason: 'cheating' }), 404, 'not-found');
    }
    expect(await filingsOf(h, reporter.id)).toEqual([]);
    // ... while in its own environment that player can be reported.
    const neighbour = await newPlayer(h, 'alpha-test-key');
    expect((await fileReport(h, neighbour, { playerId: sameProject.id, reason: 'cheating' })).status).toBe(201);
  });
});

describe('credential and service switch', () => {
  test('a server key is forbidden on both routes, and nothing is stored', async () => {
    const key = h.serverKeys['alpha-live-key'];
    const target = await newPlayer(h);
    const before = await h.db('support_filings').count({ n: '*' });
    expectError(await call(h.base, 'POST', '/support/requests', { token: key, body: aRequest }), 403, 'forbidden');
    expectError(await call(h.base, 'POST', '/support/reports', { token: key, body: { playerId: target.id, reason: 'spam' } }), 403, 'forbidden');
    expect(await h.db('support_filings').count({ n: '*' })).toEqual(before);
  });

  test('without a credential both are unauthorized', async () => {
    expectError(await call(h.base, 'POST', '/support/requests', { body: aRequest }), 401, 'unauthorized');
    expectError(await call(h.base, 'POST', '/support/reports', { body: { playerId: 'x', reason: 'spam' } }), 401, 'unauthorized');
  });

  test('a project that has not switched support on answers service-disabled, and nothing is stored', async () => {
    const p = await newPlayer(h, 'quiet-live-key');
    const other = await newPlayer(h, 'quiet-live-key');
    expectError(await fileRequest(h, p), 403, 'service-disabled');
    expectError(await fileReport(h, p, { playerId: other.id, reason: 'spam' }), 403, 'service-disabled');
    expect(await filingsOf(h, p.id)).toEqual([]);
  });
});

describe('deleting a player', () => {
  test("deletes what they filed and detaches others' reports about them, which staff keep", async () => {
    const leaving = await newPlayer(h);
    const staying = await newPlayer(h);
    const bystander = await newPlayer(h);
    expect((await fileRequest(h, leaving, { ...aRequest, contactEmail: 'leaving@example.com' })).status).toBe(201);
    expect((await fileReport(h, leaving, { playerId: staying.id, reason: 'rude' })).status).toBe(201);
    const aboutLeaving = await fileReport(h, staying, { playerId: leaving.id, reason: 'cheating', details: 'aimbot' });
    expect(aboutLeaving.status).toBe(201);
    const unrelated = await fileReport(h, staying, { playerId: bystander.id, reason: 'spam' });

    const deleted = await call(h.base, 'DELETE', `/players/${leaving.id}`, { token: h.serverKeys['alpha-live-key'] });
    expect(deleted.status).toBe(204);

    expect(await filingsOf(h, leaving.id)).toEqual([]);
    expect(await h.db('support_filings').where({ reported_player_id: leaving.id })).toEqual([]);
    const kept = await filingsOf(h, staying.id);
    expect(kept.map((r) => [r.id, r.reported_player_id, r.reason, r.details])).toEqual([
      [aboutLeaving.body.id, null, 'cheating', 'aimbot'],
      [unrelated.body.id, bystander.id, 'spam', null],
    ]);
    // The deleted player can no longer be reported.
    expectError(await fileReport(h, staying, { playerId: leaving.id, reason: 'cheating' }), 404, 'not-found');
  });
});
