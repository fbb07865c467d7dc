/**
 * Legal documents (spec §4 Legal): the documents list (from memory, paged, ETag), a player's standing
 * and outstanding documents, accepting current versions, a version bump making acceptances not
 * current, refusals, manifests, and deletion taking the acceptances with the player.
 */
import { ManifestError, removeManifest } from '@hearth/core/manifests';
import { type ApiInstance, type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { environment, legalDocument, project, standardManifests, projectWithout } from '../support/manifests';
import { eventually } from '../support/wait';

const terms = (version: string) =>
  legalDocument('terms', { environment: 'alpha-live', title: 'Terms of Service', url: 'https://example.com/terms', version, required: true });
const privacy = legalDocument('privacy', { environment: 'alpha-live', title: 'Privacy', url: 'https://example.com/privacy', version: '3', required: true });
const marketing = legalDocument('marketing', { environment: 'alpha-live', title: 'Marketing', url: 'https://example.com/news', version: '1', required: false });
// In another environment of the same namespace, under another metadata.name but the same key.
const testTerms = legalDocument('terms-for-test', {
  environment: 'alpha-test',
  document: 'terms',
  title: 'Test terms',
  url: 'https://example.com/t',
  version: '9',
  required: true,
});

const doc = (document: string, title: string, url: string, version: string, required: boolean) => ({ document, title, url, version, required });
const MARKETING = doc('marketing', 'Marketing', 'https://example.com/news', '1', false);
const PRIVACY = doc('privacy', 'Privacy', 'https://example.com/privacy', '3', true);
const TERMS_1 = doc('terms', 'Terms of Service', 'https://example.com/terms', '1', true);
const none = { acceptedVersion: null, acceptedAt: null, current: false };

describe('legal documents', () => {
  let h: Harness;
  let key: string;

  beforeAll(async () => {
    h = await startHarness({
      manifests: [...standardManifests(), ...projectWithout('nolegal', 'legal'), terms('1'), privacy, marketing, testTerms],
    });
    key = h.serverKeys['alpha-live-key'];
  });
  afterAll(async () => {
    await h.close();
  });

  test("GET /legal/documents lists the environment's documents by key, to a server key and a player alike", async () => {
    const byKey = await call(h.base, 'GET', '/legal/documents', { token: key });
    expect(byKey.status).toBe(200);
    expect(byKey.body).toEqual({ items: [MARKETING, PRIVACY, TERMS_1], next: null });
    const p = await signIn(h.base, key, 'docs-reader');
    expect((await call(h.base, 'GET', '/legal/documents', { token: p.accessToken })).body).toEqual(byKey.body);
    // The other environment has its own documents; spec.document is the key there.
    const other = await call(h.base, 'GET', '/legal/documents', { token: h.serverKeys['alpha-test-key'] });
    expect(other.body).toEqual({ items: [doc('terms', 'Test terms', 'https://example.com/t', '9', true)], next: null });
  });

  test('the list pages with cursors bound to the list, and answers 304 to its own ETag', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await call(h.base, 'GET', `/legal/documents?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: key });
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((d: { document: string }) => d.document));
      cursor = page.body.next;
    } while (cursor);
    expect(seen).toEqual(['marketing', 'privacy', 'terms']);

    const first = await call(h.base, 'GET', '/legal/documents?limit=1', { token: key });
    // A cursor of alpha-live's list is not alpha-test's.
    expectError(
      await call(h.base, 'GET', `/legal/documents?cursor=${encodeURIComponent(first.body.next)}`, { token: h.serverKeys['alpha-test-key'] }),
      400,
      'invalid-request',
      'query.cursor',
    );
    expectError(await call(h.base, 'GET', '/legal/documents?cursor=forged.cursor', { token: key }), 400, 'invalid-request', 'query.cursor');
    expectError(await call(h.base, 'GET', '/legal/documents?limit=0', { token: key }), 400, 'invalid-request', 'query.limit');

    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"\d+-/);
    const again = await call(h.base, 'GET', '/legal/documents?limit=1', { token: key, headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  test("a new player's standing: every document, nothing accepted, the required ones outstanding", async () => {
    const p = await signIn(h.base, key, 'fresh');
    const standing = await call(h.base, 'GET', '/players/me/legal', { token: p.accessToken });
    expect(standing.status).toBe(200);
    expect(standing.body).toEqual({
      documents: [
        { ...MARKETING, ...none },
        { ...PRIVACY, ...none },
        { ...TERMS_1, ...none },
      ],
      outstanding: ['privacy', 'terms'],
    });
    // A server key names the player by id.
    expect((await call(h.base, 'GET', `/players/${p.player.id}/legal`, { token: key })).body).toEqual(standing.body);
    const outstanding = await call(h.base, 'GET', '/players/me/legal/outstanding', { token: p.accessToken });
    expect(outstanding.body).toEqual({ items: [PRIVACY, TERMS_1], next: null });
    const paged = await call(h.base, 'GET', `/players/${p.player.id}/legal/outstanding?limit=1`, { token: key });
    expect(paged.body.items).toEqual([PRIVACY]);
    const rest = await call(h.base, 'GET', `/players/${p.player.id}/legal/outstanding?limit=1&cursor=${encodeURIComponent(paged.body.next)}`, { token: key });
    expect(rest.body).toEqual({ items: [TERMS_1], next: null });
  });

  test('accepting current versions: 200 standing, outstanding shrinks to empty, re-accepting changes nothing', async () => {
    const p = await signIn(h.base, key, 'accepter');
    const accepted = await call(h.base, 'POST', '/players/me/legal/accept', {
      token: p.accessToken,
      body: { documents: [{ document: 'terms', version: '1' }] },
    });
    expect(accepted.status).toBe(200);
    const termsEntry = accepted.body.documents.find((d: { document: string }) => d.document === 'terms');
    expect(termsEntry).toEqual({ ...TERMS_1, acceptedVersion: '1', acceptedAt: expect.any(String), current: true });
    expect(Math.abs(Date.parse(termsEntry.acceptedAt) - Date.now())).toBeLessThan(60_000);
    expect(accepted.body.outstanding).toEqual(['privacy']);
    expect((await call(h.base, 'GET', '/players/me/legal', { token: p.accessToken })).body).toEqual(accepted.body);

    const both = await call(h.base, 'POST', '/players/me/legal/accept', {
      token: p.accessToken,
      body: {
        documents: [
          { document: 'privacy', version: '3' },
          { document: 'terms', version: '1' },
          { document: 'marketing', version: '1' },
        ],
      },
    });
    expect(both.status).toBe(200);
    expect(both.body.outstanding).toEqual([]);
    expect(both.body.documents.every((d: { current: boolean }) => d.current)).toBe(true);
    // The first acceptance of terms v1 keeps its time.
    expect(both.body.documents.find((d: { document: string }) => d.document === 'terms').acceptedAt).toBe(termsEntry.acceptedAt);
    expect((await call(h.base, 'GET', '/players/me/legal/outstanding', { token: p.accessToken })).body).toEqual({ items: [], next: null });
    const rows = await h.db('legal_acceptances').where({ player_id: p.player.id }).count<{ count: string }[]>('* as count');
    expect(Number(rows[0].count)).toBe(3);
  });

  test('accept refusals name the entry, and a refused batch records nothing', async () => {
    const p = await signIn(h.base, key, 'refused');
    const accept = (documents: unknown, token = p.accessToken, path = '/players/me/legal/accept') => call(h.base, 'POST', path, { token, body: { documents } });
    expectError(
      await accept([
        { document: 'privacy', version: '3' },
        { document: 'nope', version: '1' },
      ]),
      400,
      'invalid-request',
      'body.documents.1.document',
    );
    expectError(
      await accept([
        { document: 'privacy', version: '3' },
        { document: 'terms', version: '2' },
      ]),
      400,
      'invalid-request',
      'body.documents.1.version',
    );
    // The other environment's document of the same key and its version are not this one's.
    expectError(await accept([{ document: 'terms', version: '9' }]), 400, 'invalid-request', 'body.documents.0.version');
    expect(await h.db('legal_acceptances').where({ player_id: p.player.id })).toEqual([]);

    expectError(await accept([]), 400, 'invalid-request', 'body.documents');
    expectError(await accept(Array.from({ length: 21 }, () => ({ document: 'terms', version: '1' }))), 400, 'invalid-request', 'body.documents');
    expectError(await accept([{ document: 'terms' }]), 400, 'invalid-request');
    expectError(await accept([{ document: 'terms', version: '1', extra: true }]), 400, 'invalid-request');
    expectError(await call(h.base, 'POST', '/players/me/legal/accept', { token: p.accessToken, body: {} }), 400, 'invalid-request', 'body.documents');
    // Player token naming an id (even its own): forbidden. A server key may not accept for a player.
    expectError(await accept([{ document: 'terms', version: '1' }], p.accessToken, `/players/${p.player.id}/legal/accept`), 403, 'forbidden');
    expectError(await accept([{ document: 'terms', version: '1' }], key, `/players/${p.player.id}/legal/accept`), 403, 'forbidden');
    expect(await h.db('legal_acceptances').where({ player_id: p.player.id })).toEqual([]);
  });

  test("a player token naming an id is forbidden; unknown, `me` with a key, and other environments' players are not-found", async () => {
    const p = await signIn(h.base, key, 'paths');
    for (const path of ['/legal', '/legal/outstanding']) {
      expectError(await call(h.base, 'GET', `/players/${p.player.id}${path}`, { token: p.accessToken }), 403, 'forbidden');
      expectError(await call(h.base, 'GET', `/players/me${path}`, { token: key }), 404, 'not-found');
      expectError(await call(h.base, 'GET', `/players/nobody-here${path}`, { token: key }), 404, 'not-found');
      expectError(await call(h.base, 'GET', `/players/${p.player.id}${path}`, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    }
  });

  test('every legal route is service-disabled where the project has not switched legal on', async () => {
    const nk = h.serverKeys['nolegal-live-key'];
    const p = await signIn(h.base, nk, 'no-legal');
    expectError(await call(h.base, 'GET', '/legal/documents', { token: nk }), 403, 'service-disabled');
    expectError(await call(h.base, 'GET', '/legal/documents', { token: p.accessToken }), 403, 'service-disabled');
    expectError(await call(h.base, 'GET', `/players/${p.player.id}/legal`, { token: nk }), 403, 'service-disabled');
    expectError(await call(h.base, 'GET', '/players/me/legal/outstanding', { token: p.accessToken }), 403, 'service-disabled');
    expectError(
      await call(h.base, 'POST', '/players/me/legal/accept', { token: p.accessToken, body: { documents: [{ document: 'terms', version: '1' }] } }),
      403,
      'service-disabled',
    );
  });

  test('deleting a player deletes their acceptances', async () => {
    const p = await signIn(h.base, key, 'leaving');
    expect(
      (await call(h.base, 'POST', '/players/me/legal/accept', { token: p.accessToken, body: { documents: [{ document: 'terms', version: '1' }] } })).status,
    ).toBe(200);
    expect(await h.db('legal_acceptances').where({ player_id: p.player.id })).toHaveLength(1);
    expect((await call(h.base, 'DELETE', `/players/${p.player.id}`, { token: key })).status).toBe(204);
    expect(await h.db('legal_acceptances').where({ player_id: p.player.id })).toEqual([]);
  });
});

describe('legal documents change through manifests', () => {
  let h: Harness;
  let other: ApiInstance;
  let key: string;

  beforeAll(async () => {
    h = await startHarness({ manifests: [...standardManifests(), terms('1'), privacy] });
    other = await h.startAnotherApi();
    key = h.serverKeys['alpha-live-key'];
  });
  afterAll(async () => {
    await h.close();
  });

  const versionsAt = async (base: string) =>
    ((await call(base, 'GET', '/legal/documents', { token: key })).body.items as { document: string; version: string }[]).map(
      (d) => `${d.document}@${d.version}`,
    );

  test('the list is served from memory: no database query per request while content is unchanged', async () => {
    await versionsAt(other.base); // warm: the key, the environment and the documents are cached
    const queries: string[] = [];
    const onQuery = (q: { sql: string }) => queries.push(q.sql);
    h.db.on('query', onQuery);
    try {
      for (let i = 0; i < 5; i++) {
        expect(await versionsAt(other.base)).toEqual(['privacy@3', 'terms@1']);
        const etag = (await call(other.base, 'GET', '/legal/documents?limit=1', { token: key })).headers.get('etag')!;
        expect((await call(other.base, 'GET', '/legal/documents?limit=1', { token: key, headers: { 'If-None-Match': etag } })).status).toBe(304);
      }
    } finally {
      h.db.removeListener('query', onQuery);
    }
    expect(queries).toEqual([]);
  });

  test('a new version applied by another process shows at once, makes acceptances not current, and changes the ETag', async () => {
    const p = await signIn(h.base, key, 'bumped');
    expect(
      (await call(other.base, 'POST', '/players/me/legal/accept', { token: p.accessToken, body: { documents: [{ document: 'terms', version: '1' }] } })).status,
    ).toBe(200);
    const etagBefore = (await call(other.base, 'GET', '/legal/documents', { token: key })).headers.get('etag')!;
    expect(await versionsAt(other.base)).toEqual(['privacy@3', 'terms@1']);

    await h.apply([terms('2')]); // through `h`'s core: `other` hears of it only through Redis
    await eventually(async () => (await versionsAt(other.base)).includes('terms@2'), 1000);
    const after = await call(other.base, 'GET', '/legal/documents', { token: key, headers: { 'If-None-Match': etagBefore } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(etagBefore);

    const standing = await call(other.base, 'GET', '/players/me/legal', { token: p.accessToken });
    const entry = standing.body.documents.find((d: { document: string }) => d.document === 'terms');
    expect(entry).toMatchObject({ version: '2', acceptedVersion: '1', current: false });
    expect(standing.body.outstanding).toEqual(['privacy', 'terms']);
    // The old version is no longer acceptable; the new one is.
    expectError(
      await call(other.base, 'POST', '/players/me/legal/accept', { token: p.accessToken, body: { documents: [{ document: 'terms', version: '1' }] } }),
      400,
      'invalid-request',
      'body.documents.0.version',
    );
    const accepted = await call(other.base, 'POST', '/players/me/legal/accept', {
      token: p.accessToken,
      body: { documents: [{ document: 'terms', version: '2' }] },
    });
    expect(accepted.body.documents.find((d: { document: string }) => d.document === 'terms')).toMatchObject({ acceptedVersion: '2', current: true });
    expect(accepted.body.outstanding).toEqual(['privacy']);
  });

  test('applying the same documents again changes nothing (the ETag stays)', async () => {
    const before = (await call(h.base, 'GET', '/legal/documents', { token: key })).headers.get('etag');
    await h.apply([terms('2'), privacy]);
    expect((await call(h.base, 'GET', '/legal/documents', { token: key })).headers.get('etag')).toBe(before);
  });

  test('one key belongs to one document of an environment; the refusal names the key field', async () => {
    const clash = legalDocument('terms-again', {
      environment: 'alpha-live',
      document: 'terms',
      title: 'T',
      url: 'https://example.com/x',
      version: '1',
      required: false,
    });
    const refused = h.apply([clash]);
    await expect(refused).rejects.toThrow(ManifestError);
    await expect(refused).rejects.toThrow(/spec\.document/);
    const missingEnv = legalDocument('lost', { environment: 'nowhere', title: 'T', url: 'https://example.com/x', version: '1', required: false });
    await expect(h.apply([missingEnv])).rejects.toThrow(/spec\.environment/);
  });

  test("removing a document takes it out of every process's list; removing it again is absent", async () => {
    const removed = await removeManifest(h.db, { kind: 'LegalDocument', namespace: 'tests', name: 'privacy' }, h.core.bus);
    expect(removed.action).toBe('removed');
    await eventually(async () => (await versionsAt(other.base)).join() === 'terms@2', 1000);
    expect((await removeManifest(h.db, { kind: 'LegalDocument', namespace: 'tests', name: 'privacy' }, h.core.bus)).action).toBe('absent');
  });
});
