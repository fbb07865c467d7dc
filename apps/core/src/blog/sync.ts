/**
 * Writing the blog: one category or one post, owned by the document that declares it
 * (`namespace/name`). Called by the BlogCategory and BlogPost reconcilers (`hearth apply`, the
 * operator). Each function takes its database from the caller, runs in one transaction (the
 * caller's when there is one), bumps the blog content version of every environment it changed and
 * announces `content` for each after the commit, so every process drops its cached blog at once.
 * Reads live in service.ts.
 *
 * Refusals are Refusal errors whose `details.field` names the field of the spec (`category`, `tags.1.slug`).
 */
import { sameJson } from '../canonical-json';
import type { Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import type { Announcer } from '../invalidation';
import { contentChanged } from '../content/game-config';
import { type OwnerPlace, type SyncAction, lockContentWriter, refuseKeyOfAnother, releaseContent, releaseOwnedRows } from '../content/owned-row';
import type { BlogCategorySpecT, BlogPostSpecT } from '../contract/resources';
import { readingMinutesOf } from '../contract/blog-content';

/** The content version kind of the blog (content_versions.kind): ETags and caches follow it. */
export const BLOG_CONTENT = 'blog';

type CategorySpec = Omit<BlogCategorySpecT, 'environment'> & { slug: string };
type PostSpec = Omit<BlogPostSpecT, 'environment'> & { slug: string };

/** The slug rule of the manifests' `slug` (spec/resources.ts), checked again for a slug taken from a document's name (which may hold dots). */
const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
function checkSlug(slug: string): void {
  if (!SLUG.test(slug) || slug.length > 120)
    throw refuse.invalid('slug', `"${slug}" is not a slug (lower-case letters and digits in words joined by single hyphens, at most 120); give spec.slug`);
}

const blogChanged = (trx: Tx, bus: Announcer, environmentId: number) => contentChanged(trx, bus, environmentId, BLOG_CONTENT);
const BLOG_CATEGORIES = { name: 'blog_categories', keyColumn: 'slug', keyField: 'slug', kind: 'BlogCategory' };
const BLOG_POSTS = { name: 'blog_posts', keyColumn: 'slug', keyField: 'slug', kind: 'BlogPost' };

/** Whether every field of `wanted` equals the stored row's (JSON columns compared as JSON). */
function sameRow(stored: Record<string, unknown>, wanted: Record<string, unknown>): boolean {
  return Object.entries(wanted).every(([field, value]) => {
    const have = stored[field] ?? null;
    if (value instanceof Date) return have instanceof Date && have.getTime() === value.getTime();
    return sameJson(have, value ?? null);
  });
}

async function postsInCategory(trx: Tx, environmentId: number, slug: string): Promise<string[]> {
  const rows: { owner: string }[] = await trx('blog_posts')
    .where({ environment_id: environmentId, category_slug: slug })
    .orderBy('owner')
    .limit(3)
    .select('owner');
  return rows.map((r) => r.owner);
}

/**
 * Makes the category `owner` declares exactly `category` in the environment. A slug of another
 * document is refused; so is moving (another slug or environment) a category posts are still in.
 */
export async function syncBlogCategory(db: Queryable, bus: Announcer, target: OwnerPlace & { category: CategorySpec }): Promise<SyncAction> {
  const { environmentId, owner, category } = target;
  checkSlug(category.slug);
  const wanted = { name: category.name, description: category.description ?? null, sort_order: category.order };
  return inTransaction(db, async (trx) => {
    await lockContentWriter(trx, environmentId);
    const before = await trx('blog_categories').where({ owner }).first();
    const moved = before && (Number(before.environment_id) !== environmentId || before.slug !== category.slug);
    if (before && !moved && sameRow(before, wanted)) return 'unchanged';
    await refuseKeyOfAnother(trx, BLOG_CATEGORIES, environmentId, category.slug, owner);
    if (moved) {
      const oldEnvironmentId = Number(before.environment_id);
      if (oldEnvironmentId !== environmentId) await lockContentWriter(trx, oldEnvironmentId);
      await leaveCategory(trx, bus, oldEnvironmentId, before.slug as string, 'slug');
    }
    await trx('blog_categories')
      .insert({ environment_id: environmentId, slug: category.slug, owner, ...wanted })
      .onConflict(['environment_id', 'slug'])
      .merge();
    await blogChanged(trx, bus, environmentId);
    return before ? 'updated' : 'created';
  });
}

/** Deletes a category row, refusing while posts are in it (their documents must move first). */
async function leaveCategory(trx: Tx, bus: Announcer, environmentId: number, slug: string, field: string): Promise<void> {
  const posts = await postsInCategory(trx, environmentId, slug);
  if (posts.length > 0) {
    throw refuse.conflict(`category "${slug}" still holds posts (BlogPost ${posts.join(', ')}): move or remove them first`, { field });
  }
  await trx('blog_categories').where({ environment_id: environmentId, slug }).delete();
  await blogChanged(trx, bus, environmentId);
}

/** Removes the category `owner` declared (its document was deleted); answers whether there was one. Refused while posts are in it. */
export async function releaseBlogCategory(db: Queryable, bus: Announcer, owner: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const before = await trx('blog_categories').where({ owner }).first();
    if (!before) return false;
    await lockContentWriter(trx, Number(before.environment_id));
    await leaveCategory(trx, bus, Number(before.environment_id), before.slug as string, 'slug');
    return true;
  });
}

/**
 * When readers see a post: a scheduled post at its `publishAt`; a published post at its
 * `publishedAt`, or else when it was first published (kept across applies: the time it already had
 * if it was published, or scheduled for a time now past), or else now; a draft never. Which time a
 * post may carry for its status is a rule of the BlogPost schema (validateManifest and the CRD).
 */
function visibleFrom(post: PostSpec, before: { status: string; published_at: Date | null } | undefined, now: Date): Date | null {
  if (post.status === 'draft') return null;
  // The schema makes publishAt required on a scheduled post (a CEL rule TypeScript cannot see).
  if (post.status === 'scheduled' && post.publishAt !== undefined) return new Date(post.publishAt);
  if (post.publishedAt !== undefined) return new Date(post.publishedAt);
  if (before?.published_at && (before.status === 'published' || before.published_at.getTime() <= now.getTime())) return before.published_at;
  return now;
}

/**
 * Makes the post `owner` declares exactly `post` in the environment. Its category must exist there;
 * a slug of another document and a tag listed twice are refused. A post moved to another environment
 * leaves the one it was in. `updated_at` moves only when something changed.
 */
export async function syncBlogPost(db: Queryable, bus: Announcer, target: OwnerPlace & { post: PostSpec }): Promise<SyncAction> {
  const { environmentId, owner, post } = target;
  checkSlug(post.slug);
  const tags = post.tags ?? [];
  const seen = new Set<string>();
  tags.forEach((tag, i) => {
    if (seen.has(tag.slug)) throw refuse.invalid(`tags.${i}.slug`, `"${tag.slug}" is listed twice`);
    seen.add(tag.slug);
  });
  return inTransaction(db, async (trx) => {
    await lockContentWriter(trx, environmentId);
    const category = await trx('blog_categories').where({ environment_id: environmentId, slug: post.category }).first('slug');
    if (!category) throw refuse.invalid('category', `names category "${post.category}", which no BlogCategory declares in this environment`);
    const before = await trx('blog_posts').where({ owner }).first();
    const moved = before && (Number(before.environment_id) !== environmentId || before.slug !== post.slug);
    const wanted = {
      category_slug: post.category,
      title: post.title,
      subtitle: post.subtitle ?? null,
      excerpt: post.excerpt ?? null,
      content: post.content,
      seo_title: post.seoTitle ?? null,
      seo_description: post.seoDescription ?? null,
      author_name: post.authorName ?? null,
      tags,
      cover: post.cover ?? null,
      featured: post.featured,
      reading_minutes: post.readingMinutes ?? readingMinutesOf(post.content),
      status: post.status,
      published_at: visibleFrom(post, moved ? undefined : before, new Date()),
    };
    if (before && !moved && sameRow(before, wanted)) return 'unchanged';
    await refuseKeyOfAnother(trx, BLOG_POSTS, environmentId, post.slug, owner);
    if (moved) {
      await trx('blog_posts').where({ owner }).delete();
      if (Number(before.environment_id) !== environmentId) await blogChanged(trx, bus, Number(before.environment_id));
    }
    const stored = { ...wanted, content: JSON.stringify(wanted.content), tags: JSON.stringify(wanted.tags), updated_at: new Date() };
    await trx('blog_posts')
      .insert({ environment_id: environmentId, slug: post.slug, owner, ...stored })
      .onConflict(['environment_id', 'slug'])
      .merge();
    await blogChanged(trx, bus, environmentId);
    return before ? 'updated' : 'created';
  });
}

/** Removes the post `owner` declared (its document was deleted); answers whether there was one. */
export async function releaseBlogPost(db: Queryable, bus: Announcer, owner: string): Promise<boolean> {
  return releaseContent(db, bus, BLOG_CONTENT, (trx) => releaseOwnedRows(trx, BLOG_POSTS.name, owner));
}
