/**
 * Conditional reads (config values and tables, flags, legal documents, blog) stay true to their
 * content with no Redis message at all: content changed by a writer that announces nothing (as
 * `hearth apply` in its own process under `make dev`, or any writer when Redis is down) is heard
 * from PostgreSQL at commit; a body and its ETag always come from one snapshot; and while the
 * process cannot hear PostgreSQL, conditional reads ask the database instead of trusting memory.
 */
import { applyManifests, validateManifest, type AnyManifest } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { call } from '../support/http';
import { blogCategory, blogPost, gameConfig, legalDocument, standardManifests } from '../support/manifests';
import { eventually } from '../support/wait';
import { reportFigure } from '../support/figures';

let h: Harness;
let key: string;

const paragraph = (text: string) => ({ blocks: [{ type: 'paragraph', text }] });
const config = (enabled: boolean, value: string) =>
  gameConfig('alpha-live-config', { environment: 'alpha-live', values: [{ key: 'motd', type: 'string', value }], flags: [{ name: 'new_shop', enabled }] });
const terms = (version: string) =>
  legalDocument('terms', { environment: 'alpha-live', title: 'Terms', url: 'https://example.com/terms', version, required: true });
const news = blogCategory('news', { environment: 'alpha-live', name: 'News' });
const post = (title: string) =>
  blogPost('launch', {
    environment: 'alpha-live',
    title,
    content: paragraph('Body.'),
    category: 'news',
    status: 'published',
    publishedAt: '2026-01-01T12:00:00.000Z',
  });

/** Changes content the way a process without Redis does: committed, and announced to nobody. */
async function applyUnannounced(docs: AnyManifest[]): Promise<void> {
  const loaded = docs.map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `quiet#${i + 1}`), origin: `quiet#${i + 1}` }));
  await applyManifests(h.db, loaded);
}

/** Each conditional read, and what its body says of the content the test changes. */
const READS: { path: string; seen: (body: any) => unknown }[] = [
  { path: '/flags', seen: (body) => body.items[0].isEnabled },
  { path: '/config/values', seen: (body) => body.items[0].valueStr },
  { path: '/legal/documents', seen: (body) => body.items[0].version },
  { path: '/blog/posts', seen: (body) => body.items[0].title },
];

async function readAll(): Promise<{ etag: string; seen: unknown }[]> {
  return Promise.all(
    READS.map(async ({ path, seen }) => {
      const reply = await call(h.base, 'GET', path, { token: key });
      expect(reply.status).toBe(200);
      return { etag: reply.headers.get('etag')!, seen: seen(reply.body) };
    }),
  );
}

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), config(true, 'one'), terms('1'), news, post('First title')] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

test('a change nobody announced is heard from PostgreSQL: old ETags stop answering 304 within a moment, not a cache lifetime', async () => {
  const before = await readAll();
  // Cached now: each old ETag answers 304.
  for (const [i, { path }] of READS.entries()) {
    expect((await call(h.base, 'GET', path, { token: key, headers: { 'If-None-Match': before[i].etag } })).status).toBe(304);
  }
  await applyUnannounced([config(false, 'two'), terms('2'), news, post('Second title')]);
  // The caches keep a copy up to 30 s; hearing the commit is what drops them, within moments.
  const heardInMs: number[] = [];
  for (const [i, { path }] of READS.entries()) {
    heardInMs.push(
      await eventually(async () => (await call(h.base, 'GET', path, { token: key, headers: { 'If-None-Match': before[i].etag } })).status === 200, 5_000, 5),
    );
  }
  reportFigure(
    `conditional reads: an unannounced change answered 200 to the old ETag after ${heardInMs.join(', ')} ms (${READS.map((r) => r.path).join(', ')})`,
  );
  const after = await readAll();
  for (const [i] of READS.entries()) {
    expect(after[i].seen).not.toEqual(before[i].seen);
    expect(after[i].etag).not.toBe(before[i].etag);
  }
});

test('a body and its ETag come from one snapshot: the body read at once after a change never carries the old ETag', async () => {
  const before = await readAll();
  await applyUnannounced([config(true, 'three'), terms('3'), news, post('Third title')]);
  // No waiting: whatever a read answers, a new body has a new ETag and the old body its old one.
  const after = await readAll();
  for (const [i] of READS.entries()) {
    if (after[i].seen === before[i].seen) expect(after[i].etag).toBe(before[i].etag);
    else expect(after[i].etag).not.toBe(before[i].etag);
  }
  // Once the change is heard (LISTEN, within moments), the flags and config values are the new ones.
  await eventually(
    async () => {
      const now = await readAll();
      return now[0].seen === true && now[1].seen === 'three';
    },
    5_000,
    5,
  );
});

test('while the process cannot hear PostgreSQL, no copy is trusted: a change is answered at once', async () => {
  const before = await readAll();
  await h.core.contentWatch.stop();
  try {
    expect(h.core.contentWatch.live).toBe(false);
    await applyUnannounced([config(false, 'four'), terms('4'), news, post('Fourth title')]);
    for (const [i, { path, seen }] of READS.entries()) {
      const reply = await call(h.base, 'GET', path, { token: key, headers: { 'If-None-Match': before[i].etag } });
      expect(reply.status).toBe(200);
      expect(seen(reply.body)).not.toEqual(before[i].seen);
      expect(reply.headers.get('etag')).not.toBe(before[i].etag);
    }
    // And a current ETag still answers 304, from the database.
    const flags = await call(h.base, 'GET', '/flags', { token: key });
    expect((await call(h.base, 'GET', '/flags', { token: key, headers: { 'If-None-Match': flags.headers.get('etag')! } })).status).toBe(304);
  } finally {
    await h.core.contentWatch.start();
  }
  expect(h.core.contentWatch.live).toBe(true);
});

test('while the process hears PostgreSQL, a 304 reads nothing from the database (the caches answer it)', async () => {
  const current = await readAll();
  // Once each, so that every copy is loaded.
  for (const [i, { path }] of READS.entries()) await call(h.base, 'GET', path, { token: key, headers: { 'If-None-Match': current[i].etag } });
  let queries = 0;
  const count = () => queries++;
  h.db.on('query', count);
  try {
    for (let round = 0; round < 10; round++) {
      for (const [i, { path }] of READS.entries()) {
        expect((await call(h.base, 'GET', path, { token: key, headers: { 'If-None-Match': current[i].etag } })).status).toBe(304);
      }
    }
  } finally {
    h.db.off('query', count);
  }
  expect(queries).toBe(0);
});
