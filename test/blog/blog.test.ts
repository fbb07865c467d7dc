/**
 * The read-only blog over HTTP: every route and its refusals, the order and pages of the post list,
 * scheduled posts appearing by themselves, and reads served from memory until an apply changes them.
 */
import type { AnyManifest } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { blogCategory, blogPost, environment, project, standardManifests, projectWithout } from '../support/manifests';
import { eventually } from '../support/wait';
import { TestClock } from '../support/clock';

const paragraph = (text: string) => ({ blocks: [{ type: 'paragraph', text }] });

function post(name: string, spec: Record<string, unknown>, env = 'alpha-live'): AnyManifest {
  return blogPost(name, {
    environment: env,
    title: `Title of ${name}`,
    content: paragraph(`Body of ${name}.`),
    category: 'news',
    status: 'published',
    ...spec,
  });
}

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 12, minute)).toISOString();

function blogManifests(): AnyManifest[] {
  return [
    ...standardManifests(),
    ...projectWithout('noblog', 'blog'),
    blogCategory('news', { environment: 'alpha-live', name: 'News', description: 'What is new', order: 2 }),
    blogCategory('patch-notes', { environment: 'alpha-live', name: 'Patch notes', order: 1 }),
    blogCategory('empty', { environment: 'alpha-live', name: 'Empty', order: 0 }),
    blogCategory('diary', { environment: 'alpha-live', slug: 'dev-diary', name: 'Dev diary', order: 3 }),
    blogCategory('test-news', { environment: 'alpha-test', slug: 'news', name: 'Test news' }),
    post('launch', {
      publishedAt: at(10),
      subtitle: 'We are live',
      excerpt: 'The game is out.',
      authorName: 'Ada',
      featured: true,
      cover: 'https://cdn.example.com/launch.png',
      seoTitle: 'Launch day',
      tags: [
        { slug: 'release', name: 'Release' },
        { slug: 'events', name: 'Events' },
      ],
      content: {
        blocks: [
          { type: 'heading', level: 2, text: 'Hello' },
          { type: 'paragraph', text: 'It is out.' },
          { type: 'image', url: 'https://cdn.example.com/a.png', alt: 'A picture', caption: 'Look' },
          { type: 'list', ordered: true, items: ['one', 'two'] },
          { type: 'quote', text: 'Ship it', attribution: 'Everyone' },
          { type: 'code', language: 'ts', code: 'let x = 1;' },
        ],
      },
    }),
    post('patch-1', { category: 'patch-notes', publishedAt: at(20), tags: [{ slug: 'release', name: 'Release' }], readingMinutes: 7 }),
    post('patch-2', { category: 'patch-notes', publishedAt: at(30) }),
    // Two posts at one time: slug breaks the tie.
    post('same-b', { publishedAt: at(40), tags: [{ slug: 'events', name: 'Events' }] }),
    post('same-a', { publishedAt: at(40) }),
    post('older', { publishedAt: at(1) }),
    post('draft-one', { category: 'dev-diary', status: 'draft', tags: [{ slug: 'secret', name: 'Secret' }] }),
    post('future', { status: 'scheduled', publishAt: '2099-01-01T00:00:00Z', tags: [{ slug: 'future-tag', name: 'Future' }] }),
    post('elsewhere', { publishedAt: at(50) }, 'alpha-test'),
  ];
}

let h: Harness;
/** The API's clock: the scheduled posts' test moves it past a post's time. */
const clock = new TestClock();
let key: string;
let playerToken: string;

beforeAll(async () => {
  h = await startHarness({ manifests: blogManifests(), clock });
  key = h.serverKeys['alpha-live-key'];
  playerToken = (await signIn(h.base, key, 'blog-reader')).accessToken;
});
afterAll(async () => {
  await h.close();
});

const slugsOf = (reply: { body: { items: { slug: string }[] } }) => reply.body.items.map((p) => p.slug);

describe('GET /blog/posts', () => {
  test('published posts only, newest first with slug as tiebreak, for a server key and a player token alike', async () => {
    const expected = ['same-a', 'same-b', 'patch-2', 'patch-1', 'launch', 'older'];
    for (const token of [key, playerToken]) {
      const reply = await call(h.base, 'GET', '/blog/posts', { token });
      expect(reply.status).toBe(200);
      expect(slugsOf(reply)).toEqual(expected);
      expect(reply.body.next).toBeNull();
    }
  });

  test('a summary carries exactly the spec fields; defaults are null or false', async () => {
    const reply = await call(h.base, 'GET', '/blog/posts', { token: key });
    const launch = reply.body.items.find((p: { slug: string }) => p.slug === 'launch');
    expect(launch).toEqual({
      slug: 'launch',
      title: 'Title of launch',
      subtitle: 'We are live',
      excerpt: 'The game is out.',
      publishedAt: at(10),
      readingMinutes: 1,
      featured: true,
      authorName: 'Ada',
      category: { slug: 'news', name: 'News' },
      tags: [
        { slug: 'release', name: 'Release' },
        { slug: 'events', name: 'Events' },
      ],
      cover: 'https://cdn.example.com/launch.png',
    });
    const patch1 = reply.body.items.find((p: { slug: string }) => p.slug === 'patch-1');
    expect(patch1).toMatchObject({
      subtitle: null,
      excerpt: null,
      authorName: null,
      featured: false,
      cover: null,
      readingMinutes: 7,
      category: { slug: 'patch-notes', name: 'Patch notes' },
    });
  });

  test('filtered by category, by tag, and by both', async () => {
    expect(slugsOf(await call(h.base, 'GET', '/blog/posts?category=patch-notes', { token: key }))).toEqual(['patch-2', 'patch-1']);
    expect(slugsOf(await call(h.base, 'GET', '/blog/posts?tag=release', { token: key }))).toEqual(['patch-1', 'launch']);
    expect(slugsOf(await call(h.base, 'GET', '/blog/posts?tag=events&category=news', { token: key }))).toEqual(['same-b', 'launch']);
    // A category that exists but has no published post is an empty list, not a refusal.
    const empty = await call(h.base, 'GET', '/blog/posts?category=empty', { token: key });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ items: [], next: null });
  });

  test('an unknown category or tag is not-found; so is a tag only drafts or scheduled posts carry', async () => {
    expectError(await call(h.base, 'GET', '/blog/posts?category=nope', { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'GET', '/blog/posts?tag=nope', { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'GET', '/blog/posts?tag=secret', { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'GET', '/blog/posts?tag=future-tag', { token: key }), 404, 'not-found');
    // A category of another environment does not exist here.
    expectError(await call(h.base, 'GET', '/blog/posts?category=nope', { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'GET', '/blog/posts?category=BAD_SLUG', { token: key }), 400, 'invalid-request', 'query.category');
  });

  test('pages read on from the last post: no duplicates, no gaps, with and without filters', async () => {
    for (const [filter, all] of [
      ['', ['same-a', 'same-b', 'patch-2', 'patch-1', 'launch', 'older']],
      ['category=news&', ['same-a', 'same-b', 'launch', 'older']],
      ['tag=release&', ['patch-1', 'launch']],
    ] as const) {
      for (const limit of [1, 2, 4]) {
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const reply: { status: number; body: { items: { slug: string }[]; next: string | null } } = await call(
            h.base,
            'GET',
            `/blog/posts?${filter}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
            { token: key },
          );
          expect(reply.status).toBe(200);
          expect(reply.body.items.length).toBeLessThanOrEqual(limit);
          seen.push(...slugsOf(reply));
          cursor = reply.body.next;
          pages++;
        } while (cursor !== null && pages < 20);
        expect({ filter, limit, seen }).toEqual({ filter, limit, seen: all });
      }
    }
  });

  test('a cursor of another list (other filters, another environment, another route, edited) is refused', async () => {
    const first = await call(h.base, 'GET', '/blog/posts?limit=2', { token: key });
    const cursor = encodeURIComponent(first.body.next);
    expectError(await call(h.base, 'GET', `/blog/posts?category=news&limit=2&cursor=${cursor}`, { token: key }), 400, 'invalid-request', 'query.cursor');
    expectError(await call(h.base, 'GET', `/blog/posts?tag=release&cursor=${cursor}`, { token: key }), 400, 'invalid-request', 'query.cursor');
    expectError(await call(h.base, 'GET', `/blog/posts?cursor=${cursor}`, { token: h.serverKeys['alpha-test-key'] }), 400, 'invalid-request', 'query.cursor');
    expectError(await call(h.base, 'GET', `/blog/tags?cursor=${cursor}`, { token: key }), 400, 'invalid-request', 'query.cursor');
    const edited = encodeURIComponent(Buffer.from(JSON.stringify([0, 'zzz'])).toString('base64url') + first.body.next.slice(first.body.next.indexOf('.')));
    expectError(await call(h.base, 'GET', `/blog/posts?cursor=${edited}`, { token: key }), 400, 'invalid-request', 'query.cursor');
    // The same list's cursor works.
    expect(slugsOf(await call(h.base, 'GET', `/blog/posts?limit=2&cursor=${cursor}`, { token: key }))).toEqual(['patch-2', 'patch-1']);
  });

  test('each environment sees its own blog', async () => {
    const reply = await call(h.base, 'GET', '/blog/posts', { token: h.serverKeys['alpha-test-key'] });
    expect(slugsOf(reply)).toEqual(['elsewhere']);
    expect(reply.body.items[0].category).toEqual({ slug: 'news', name: 'Test news' });
    expectError(await call(h.base, 'GET', '/blog/posts/elsewhere', { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'GET', '/blog/posts/launch', { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
  });
});

describe('GET /blog/posts/:slug', () => {
  test('the full post: summary, content, SEO fields, updatedAt, and related posts of its category first', async () => {
    const reply = await call(h.base, 'GET', '/blog/posts/launch', { token: playerToken });
    expect(reply.status).toBe(200);
    const { post: full, related } = reply.body;
    expect(full).toMatchObject({ slug: 'launch', seoTitle: 'Launch day', seoDescription: 'The game is out.', publishedAt: at(10) });
    expect(full.content.blocks).toHaveLength(6);
    expect(full.content.blocks[2]).toEqual({ type: 'image', url: 'https://cdn.example.com/a.png', alt: 'A picture', caption: 'Look' });
    expect(Date.parse(full.updatedAt)).toBeGreaterThan(Date.now() - 10 * 60_000);
    // Same category (news), newest first, then the others.
    expect(related.map((p: { slug: string }) => p.slug)).toEqual(['same-a', 'same-b', 'older']);

    const patch = await call(h.base, 'GET', '/blog/posts/patch-1', { token: key });
    expect(patch.body.post).toMatchObject({ seoTitle: 'Title of patch-1', seoDescription: null });
    expect(patch.body.related.map((p: { slug: string }) => p.slug)).toEqual(['patch-2', 'same-a', 'same-b']);
  });

  test('drafts, scheduled posts not yet due and unknown slugs are not-found', async () => {
    for (const slug of ['draft-one', 'future', 'no-such-post']) expectError(await call(h.base, 'GET', `/blog/posts/${slug}`, { token: key }), 404, 'not-found');
  });
});

describe('GET /blog/categories and /blog/tags', () => {
  test('categories with a published post, in console order (order, then slug)', async () => {
    const reply = await call(h.base, 'GET', '/blog/categories', { token: key });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      items: [
        { slug: 'patch-notes', name: 'Patch notes', description: null },
        { slug: 'news', name: 'News', description: 'What is new' },
      ],
      next: null,
    });
    const paged = await call(h.base, 'GET', '/blog/categories?limit=1', { token: key });
    expect(paged.body.items.map((c: { slug: string }) => c.slug)).toEqual(['patch-notes']);
    const rest = await call(h.base, 'GET', `/blog/categories?limit=1&cursor=${encodeURIComponent(paged.body.next)}`, { token: key });
    expect(rest.body).toEqual({ items: [{ slug: 'news', name: 'News', description: 'What is new' }], next: null });
  });

  test('tags on a published post, by name', async () => {
    const reply = await call(h.base, 'GET', '/blog/tags', { token: playerToken });
    expect(reply.body).toEqual({
      items: [
        { slug: 'events', name: 'Events' },
        { slug: 'release', name: 'Release' },
      ],
      next: null,
    });
  });
});

describe('refusals of the pipeline', () => {
  test('service-disabled where the project has not switched the blog on; unauthorized without a credential', async () => {
    for (const path of ['/blog/posts', '/blog/posts/launch', '/blog/categories', '/blog/tags']) {
      expectError(await call(h.base, 'GET', path, { token: h.serverKeys['noblog-live-key'] }), 403, 'service-disabled');
      expectError(await call(h.base, 'GET', path), 401, 'unauthorized');
    }
  });
});

describe('conditional reads', () => {
  test('an ETag that answers 304 until the blog changes', async () => {
    const first = await call(h.base, 'GET', '/blog/posts', { token: key });
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"b\d+\./);
    const again = await call(h.base, 'GET', '/blog/posts', { token: key, headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    const otherAsk = await call(h.base, 'GET', '/blog/tags', { token: key, headers: { 'If-None-Match': etag } });
    expect(otherAsk.status).toBe(200);
  });
});

describe('scheduled posts and the cache', () => {
  test('a scheduled post appears by itself once its time passes: in the list, by slug, in categories and tags', async () => {
    // In alpha-test: once the clock has moved, the post's time is ahead of the wall's, and the later
    // tests' posts in alpha-live, published at the wall's time, must still be the newest there.
    const key = h.serverKeys['alpha-test-key'];
    const dueAt = clock.now() + 60_000;
    await h.apply([
      blogCategory('soon-cat', { environment: 'alpha-test', name: 'Soon', order: 10 }),
      post(
        'soon',
        { category: 'soon-cat', status: 'scheduled', publishAt: new Date(dueAt).toISOString(), tags: [{ slug: 'soon-tag', name: 'Soon tag' }] },
        'alpha-test',
      ),
    ]);
    // Read now (and so cached) before its time: not there anywhere.
    const list = await call(h.base, 'GET', '/blog/posts', { token: key });
    const etag = list.headers.get('etag')!;
    expect(slugsOf(list)).not.toContain('soon');
    expectError(await call(h.base, 'GET', '/blog/posts/soon', { token: key }), 404, 'not-found');
    expect((await call(h.base, 'GET', '/blog/categories', { token: key })).body.items.map((c: { slug: string }) => c.slug)).not.toContain('soon-cat');
    expect((await call(h.base, 'GET', '/blog/tags', { token: key })).body.items.map((t: { slug: string }) => t.slug)).not.toContain('soon-tag');
    expect(clock.now()).toBeLessThan(dueAt); // the reads above really were before its time

    await clock.advance(dueAt - clock.now());
    const after = await call(h.base, 'GET', '/blog/posts', { token: key, headers: { 'If-None-Match': etag } });
    expect(after.status).toBe(200); // not 304: what readers see changed
    expect(slugsOf(after)[0]).toBe('soon');
    expect(after.body.items[0].publishedAt).toBe(new Date(dueAt).toISOString());
    expect((await call(h.base, 'GET', '/blog/posts/soon', { token: key })).status).toBe(200);
    expect((await call(h.base, 'GET', '/blog/categories', { token: key })).body.items.map((c: { slug: string }) => c.slug)).toContain('soon-cat');
    expect((await call(h.base, 'GET', '/blog/tags', { token: key })).body.items).toContainEqual({ slug: 'soon-tag', name: 'Soon tag' });
    expect(slugsOf(await call(h.base, 'GET', '/blog/posts?tag=soon-tag', { token: key }))).toEqual(['soon']);
  });

  test('reads make no database query while the blog is unchanged; an apply changes them at once, in every process', async () => {
    const other = await h.startAnotherApi();
    const paths = ['/blog/posts', '/blog/posts?category=news&limit=2', '/blog/posts/launch', '/blog/categories', '/blog/tags'];
    // Warm both processes' caches.
    for (const base of [h.base, other.base]) for (const path of paths) expect((await call(base, 'GET', path, { token: key })).status).toBe(200);

    // Both processes share this knex instance: count every statement.
    const queries: string[] = [];
    const onQuery = (q: { sql: string }) => queries.push(q.sql);
    h.db.on('query', onQuery);
    try {
      for (let i = 0; i < 3; i++)
        for (const base of [h.base, other.base]) for (const path of paths) expect((await call(base, 'GET', path, { token: key })).status).toBe(200);
    } finally {
      h.db.removeListener('query', onQuery);
    }
    expect(queries).toEqual([]);

    // No publishedAt: published at its first apply, so it is the newest.
    await h.apply([post('breaking', { title: 'Breaking' })]);
    expect(slugsOf(await call(h.base, 'GET', '/blog/posts', { token: key }))[0]).toBe('breaking');
    await eventually(async () => slugsOf(await call(other.base, 'GET', '/blog/posts', { token: key }))[0] === 'breaking', 1000);
    expect((await call(other.base, 'GET', '/blog/posts/breaking', { token: key })).body.post.title).toBe('Breaking');

    // A changed post is read changed; a removed one is gone.
    const firstPublished = (await call(h.base, 'GET', '/blog/posts/breaking', { token: key })).body.post.publishedAt;
    await h.apply([post('breaking', { title: 'Breaking, updated' })]);
    const updated = await call(h.base, 'GET', '/blog/posts/breaking', { token: key });
    // Its first publication time stays: an edit does not bring an old post back to the top.
    expect(updated.body.post).toMatchObject({ title: 'Breaking, updated', publishedAt: firstPublished });
    expect(Date.parse(updated.body.post.updatedAt)).toBeGreaterThan(Date.parse(firstPublished));
  });
});
