/**
 * The BlogCategory and BlogPost kinds: applied, applied again (unchanged, no version move), refused
 * (naming the field, changing nothing), moved and removed; and the publication times they store.
 */
import { type AnyManifest, ManifestError, removeManifest, validateManifest } from '@hearth/core/manifests';
import { BLOG_CONTENT } from '@hearth/core/blog';
import { readingMinutesOf } from '@hearth/core/contract';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { contentVersion, manifestRefusal, reconcileDocument } from '../support/reconcile';
import { NAMESPACE, blogCategory, blogPost, standardManifests } from '../support/manifests';

let h: Harness;
let key: string;

const category = (name: string, spec: Record<string, unknown> = {}) => blogCategory(name, { environment: 'alpha-live', name: `Category ${name}`, ...spec });
const post = (name: string, spec: Record<string, unknown> = {}) =>
  blogPost(name, {
    environment: 'alpha-live',
    title: `Post ${name}`,
    content: { blocks: [{ type: 'paragraph', text: 'Hello there.' }] },
    category: 'guides',
    status: 'published',
    ...spec,
  });

const reconcile = (doc: AnyManifest) => reconcileDocument(h.db, h.core.bus, doc);
const blogVersion = (environmentName = 'alpha-live') => contentVersion(h.db, BLOG_CONTENT, environmentName);

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), category('guides')] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

describe('BlogPost', () => {
  test('applied, then applied again: unchanged, and the content version stays', async () => {
    expect((await reconcile(post('first'))).action).toBe('created');
    const version = await blogVersion();
    expect((await reconcile(post('first'))).action).toBe('unchanged');
    expect(await blogVersion()).toBe(version);
    expect((await reconcile(post('first', { title: 'Renamed' }))).action).toBe('updated');
    expect(await blogVersion()).toBe(version + 1);
    expect((await call(h.base, 'GET', '/blog/posts/first', { token: key })).body.post.title).toBe('Renamed');
  });

  test('refusals name the field and change nothing', async () => {
    const version = await blogVersion();
    const cases: [AnyManifest, string][] = [
      [post('bad-1', { category: 'no-such' }), 'spec.category'],
      [post('bad-2', { status: 'scheduled' }), 'spec.publishAt'],
      [post('bad-3', { status: 'published', publishAt: '2030-01-01T00:00:00Z' }), 'spec.publishAt'],
      [post('bad-4', { status: 'draft', publishedAt: '2020-01-01T00:00:00Z' }), 'spec.publishedAt'],
      [
        post('bad-5', {
          tags: [
            { slug: 'a', name: 'A' },
            { slug: 'a', name: 'Again' },
          ],
        }),
        'spec.tags.1.slug',
      ],
      [post('bad-6', { slug: 'first' }), 'spec.slug'], // belongs to BlogPost tests/first
      [post('bad.7'), 'spec.slug'], // a name with a dot is no slug
    ];
    for (const [doc, field] of cases) {
      const err = await manifestRefusal(() => reconcile(doc));
      expect({ name: doc.metadata.name, field: err.field }).toEqual({ name: doc.metadata.name, field });
    }
    expect(await blogVersion()).toBe(version);
    expect(await h.db('blog_posts').where('slug', 'like', 'bad%').count('* as n').first()).toEqual({ n: '0' });
  });

  test('the schema refuses bad content, an unknown status and a cover that is no address', () => {
    const bad: [AnyManifest, string][] = [
      [post('c1', { content: { blocks: [{ type: 'video', url: 'https://x' }] } }), 'spec.content.blocks.0.type'],
      [
        post('c2', {
          content: {
            blocks: [
              { type: 'paragraph', text: 'ok' },
              { type: 'heading', level: 1, text: 'Top' },
            ],
          },
        }),
        'spec.content.blocks.1.level',
      ],
      [post('c3', { content: { blocks: [{ type: 'paragraph', text: 'x', bold: true }] } }), 'spec.content.blocks.0.bold'],
      [post('c4', { content: { blocks: [{ type: 'image', url: 'javascript:alert(1)', alt: '' }] } }), 'spec.content.blocks.0.url'],
      [post('c5', { status: 'live' }), 'spec.status'],
      [post('c6', { cover: 'ftp://x' }), 'spec.cover'],
      [post('c7', { publishAt: 'tomorrow', status: 'scheduled' }), 'spec.publishAt'],
    ];
    for (const [doc, field] of bad) {
      let err: unknown;
      try {
        validateManifest(JSON.parse(JSON.stringify(doc)), 'test');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ManifestError);
      expect({ name: doc.metadata.name, field: (err as ManifestError).field }).toEqual({ name: doc.metadata.name, field });
    }
    // Every block type passes as documented.
    expect(() =>
      validateManifest(
        JSON.parse(
          JSON.stringify(
            post('ok', {
              content: {
                blocks: [
                  { type: 'paragraph', text: 'p' },
                  { type: 'heading', level: 3, text: 'h' },
                  { type: 'image', url: 'https://cdn.example.com/x.png', alt: '' },
                  { type: 'list', ordered: false, items: ['a', 'b'] },
                  { type: 'quote', text: 'q' },
                  { type: 'code', code: 'x' },
                ],
              },
            }),
          ),
        ),
        'test',
      ),
    ).not.toThrow();
  });

  test('readingMinutes: given, or the words at 200 a minute rounded up', async () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
    const content = {
      blocks: [
        { type: 'paragraph', text: words(350) },
        { type: 'list', ordered: false, items: [words(51)] },
      ],
    };
    expect(readingMinutesOf(content as never)).toBe(3);
    await reconcile(post('long', { content }));
    expect((await call(h.base, 'GET', '/blog/posts/long', { token: key })).body.post.readingMinutes).toBe(3);
    await reconcile(post('long', { content, readingMinutes: 12 }));
    expect((await call(h.base, 'GET', '/blog/posts/long', { token: key })).body.post.readingMinutes).toBe(12);
  });

  test('publication times: a draft published later is published then; a past schedule keeps its time when published', async () => {
    await reconcile(post('drafted', { status: 'draft' }));
    expectError(await call(h.base, 'GET', '/blog/posts/drafted', { token: key }), 404, 'not-found');
    const before = Date.now();
    await reconcile(post('drafted'));
    const publishedAt = Date.parse((await call(h.base, 'GET', '/blog/posts/drafted', { token: key })).body.post.publishedAt);
    expect(publishedAt).toBeGreaterThanOrEqual(before - 5);
    expect(publishedAt).toBeLessThanOrEqual(Date.now());

    const past = '2026-02-01T10:00:00.000Z';
    await reconcile(post('was-scheduled', { status: 'scheduled', publishAt: past }));
    await reconcile(post('was-scheduled'));
    expect((await call(h.base, 'GET', '/blog/posts/was-scheduled', { token: key })).body.post.publishedAt).toBe(past);
    // Back to draft, it is gone.
    await reconcile(post('was-scheduled', { status: 'draft' }));
    expectError(await call(h.base, 'GET', '/blog/posts/was-scheduled', { token: key }), 404, 'not-found');
  });

  test('moved to another environment, it leaves the one it was in', async () => {
    await reconcile(category('guides-test', { environment: 'alpha-test', slug: 'guides' }));
    await reconcile(post('mover'));
    expect((await call(h.base, 'GET', '/blog/posts/mover', { token: key })).status).toBe(200);
    expect((await reconcile(post('mover', { environment: 'alpha-test' }))).action).toBe('updated');
    expectError(await call(h.base, 'GET', '/blog/posts/mover', { token: key }), 404, 'not-found');
    expect((await call(h.base, 'GET', '/blog/posts/mover', { token: h.serverKeys['alpha-test-key'] })).status).toBe(200);
  });

  test('removed: gone at once, then absent', async () => {
    await reconcile(post('doomed'));
    expect((await call(h.base, 'GET', '/blog/posts/doomed', { token: key })).status).toBe(200);
    expect((await removeManifest(h.db, { kind: 'BlogPost', namespace: NAMESPACE, name: 'doomed' }, h.core.bus)).action).toBe('removed');
    expectError(await call(h.base, 'GET', '/blog/posts/doomed', { token: key }), 404, 'not-found');
    expect((await removeManifest(h.db, { kind: 'BlogPost', namespace: NAMESPACE, name: 'doomed' }, h.core.bus)).action).toBe('absent');
  });
});

describe('BlogCategory', () => {
  test('applied, unchanged, updated; its slug is its name unless given', async () => {
    expect((await reconcile(category('tips', { order: 5 }))).action).toBe('created');
    expect((await reconcile(category('tips', { order: 5 }))).action).toBe('unchanged');
    expect((await reconcile(category('tips', { order: 6, description: 'Tips' }))).action).toBe('updated');
    expect(
      await h
        .db('blog_categories')
        .where({ owner: `${NAMESPACE}/tips` })
        .first('slug', 'sort_order', 'description'),
    ).toEqual({ slug: 'tips', sort_order: 6, description: 'Tips' });
  });

  test('a slug of another document is refused; so is moving or removing a category posts are in', async () => {
    expect((await manifestRefusal(() => reconcile(category('copycat', { slug: 'guides' })))).field).toBe('spec.slug');
    expect((await manifestRefusal(() => reconcile(category('guides', { slug: 'renamed-guides' })))).field).toBe('spec.slug');
    await expect(removeManifest(h.db, { kind: 'BlogCategory', namespace: NAMESPACE, name: 'guides' }, h.core.bus)).rejects.toMatchObject({ code: 'conflict' });
    expect(
      await h
        .db('blog_categories')
        .where({ owner: `${NAMESPACE}/guides` })
        .first('slug'),
    ).toEqual({ slug: 'guides' });
  });

  test('an empty category is removed, then absent', async () => {
    await reconcile(category('brief'));
    expect((await removeManifest(h.db, { kind: 'BlogCategory', namespace: NAMESPACE, name: 'brief' }, h.core.bus)).action).toBe('removed');
    expect((await removeManifest(h.db, { kind: 'BlogCategory', namespace: NAMESPACE, name: 'brief' }, h.core.bus)).action).toBe('absent');
  });
});
