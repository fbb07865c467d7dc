/**
 * Reading the blog, from memory. Each environment's blog (its categories and every post that is not
 * a draft, with their content) is loaded once into a snapshot; every read answers from it with no
 * database query until the blog changes: the reconcilers bump the blog content version and announce
 * `content` (PostgreSQL tells every process's ContentWatch when the change commits), which drops the
 * snapshot. While the watch is down, and once a snapshot is older than SNAPSHOT_CHECK_MS, a read asks
 * the database for the version first and keeps the snapshot when it did not move.
 *
 * Scheduled posts appear by themselves: a post is visible once its time (`published_at`) is not
 * after this process's clock. What readers see is a view of the snapshot at a moment, and a view is
 * valid only until the next scheduled time after it; the first read past that time builds the next
 * view from memory, so a cached list neither hides a post past its time nor shows one before it.
 */
import type { Db, Queryable } from '../db/knex';
import { refuse } from '../errors';
import { SingleFlight } from '../cache';
import { type Clock, systemClock } from '../clock';
import type { InvalidationBus } from '../invalidation';
import { type CursorCodec, keysetPage, type Page } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { BlogContent } from '../contract/blog-content';
import { BLOG_CONTENT } from './sync';
import { AskDigests } from '../content/ask-digests';
import type { ContentSources } from '../content/content-watch';
import { readContentVersion } from '../content/game-config';
import type { PageRequest } from '../shapes/common';
import {
  type BlogCategoryInfo,
  type BlogPostFull,
  type BlogPostRead,
  type BlogPostsQuery,
  type BlogPostSummary,
  type BlogTag,
  RELATED_POSTS,
} from '../shapes/blog';

/** How old a snapshot may get before its version is checked against the database again. */
export const SNAPSHOT_CHECK_MS = 30_000;

/** A post as the snapshot holds it: its answers built once, its time as a number. */
interface HeldPost {
  at: number;
  summary: BlogPostSummary;
  full: BlogPostFull;
}
interface HeldCategory extends BlogCategoryInfo {
  order: number;
}

/** What readers see at one moment. */
interface BlogView {
  /** Posts visible at that moment, newest first (publishedAt desc, slug asc). */
  posts: HeldPost[];
  bySlug: Map<string, HeldPost>;
  /** Categories with a visible post, in console order. */
  categories: BlogCategoryInfo[];
  /** Tags on a visible post, by name then slug; a tag's name is the one its newest visible post gives it. */
  tags: BlogTag[];
  /** Lists filtered by category or tag, built on first ask. */
  filtered: Map<string, HeldPost[]>;
  /** The next scheduled time after this view's moment: the view is stale from then on. */
  validUntil: number;
  /** The newest visible time: with the content version, it names what readers see (the ETag). */
  stamp: number;
  /** The version part of this view's ETags (its snapshot's version and stamp), made once. */
  etagVersion?: string;
}

interface Snapshot {
  version: number;
  checkedAt: number;
  /** The ContentWatch epoch it was checked in (-1: the watch was down, so it is checked again). */
  epoch: number;
  /** Every post that is not a draft, newest first, scheduled ones included. */
  posts: HeldPost[];
  categories: Map<string, HeldCategory>;
  view?: BlogView;
}

/** One read of the blog: a snapshot and the view of it at one moment (a body and its ETag come from one). */
export interface BlogMoment {
  snapshot: Snapshot;
  view: BlogView;
}

/** Newest first, then by slug: the one order of every post list (and of cursors into it). */
function before(a: { at: number; slug: string }, b: { at: number; slug: string }): boolean {
  return a.at > b.at || (a.at === b.at && a.slug < b.slug);
}

export class BlogService {
  private snapshots = new Map<number, Snapshot>();
  /** Moves on every invalidation of an environment: a load that saw an older generation is not kept. */
  private generations = new Map<number, number>();
  private flight = new SingleFlight<number, Snapshot>();
  private readonly asks = new AskDigests();

  /**
   * `pool` serves the snapshots only: shared by every request of the process, they hold committed
   * data. `clock` decides visibility (a test moves its own past a post's time).
   */
  constructor(
    private readonly content: ContentSources,
    private readonly clock: Clock = systemClock,
  ) {
    content.bus.on((event) => {
      if (event.kind === 'content') this.drop(event.environmentId);
      if (event.kind === 'environments') for (const id of [...this.snapshots.keys()]) this.drop(id);
    });
  }

  private drop(envId: number): void {
    this.generations.set(envId, (this.generations.get(envId) ?? 0) + 1);
    this.snapshots.delete(envId);
  }

  /** The environment's blog as readers see it now, and the snapshot it is a view of: from memory while nothing changed. */
  async current(envId: number): Promise<BlogMoment> {
    const now = this.clock.now();
    let snapshot = this.snapshots.get(envId);
    // A snapshot made before the ContentWatch last went down, or while it is down, may have missed a change.
    if (!snapshot || !this.content.watch.live || snapshot.epoch !== this.content.watch.epoch || now - snapshot.checkedAt >= SNAPSHOT_CHECK_MS) {
      const held = snapshot;
      snapshot = await this.flight.run(envId, () => this.refresh(envId, held));
    }
    if (!snapshot.view || now >= snapshot.view.validUntil) snapshot.view = viewAt(snapshot, now);
    return { snapshot, view: snapshot.view };
  }

  /** Keeps a snapshot whose version did not move; loads one otherwise. */
  private async refresh(envId: number, held: Snapshot | undefined): Promise<Snapshot> {
    const generation = this.generations.get(envId) ?? 0;
    const epoch = this.content.watch.live ? this.content.watch.epoch : -1;
    let snapshot: Snapshot;
    if (held && held.version === (await this.versionOf(this.content.pool, envId))) {
      held.checkedAt = this.clock.now();
      snapshot = held;
    } else {
      snapshot = await this.load(envId);
    }
    snapshot.epoch = epoch;
    // An invalidation during the load may have come after what it read: let the next read load again.
    if ((this.generations.get(envId) ?? 0) === generation) this.snapshots.set(envId, snapshot);
    return snapshot;
  }

  private versionOf(db: Queryable, envId: number): Promise<number> {
    return readContentVersion(db, envId, BLOG_CONTENT);
  }

  /** The version, categories and posts as of one moment (one repeatable-read transaction): every post's category is there. */
  private async load(envId: number): Promise<Snapshot> {
    const { version, categoryRows, postRows } = await this.content.pool.transaction(
      async (trx) => ({
        version: await this.versionOf(trx, envId),
        categoryRows: await trx('blog_categories')
          .where({ environment_id: envId })
          .orderBy([{ column: 'sort_order' }, { column: 'slug' }]),
        postRows: await trx('blog_posts')
          .where({ environment_id: envId })
          .whereNotNull('published_at')
          .orderBy([{ column: 'published_at', order: 'desc' }, { column: 'slug' }]),
      }),
      { isolationLevel: 'repeatable read', readOnly: true },
    );
    const categories = new Map<string, HeldCategory>();
    for (const row of categoryRows) {
      categories.set(row.slug, { slug: row.slug, name: row.name, description: row.description ?? null, order: row.sort_order });
    }
    const posts = postRows.map((row): HeldPost => {
      const category = categories.get(row.category_slug);
      // blog_posts.category_slug references blog_categories, read in the same transaction
      if (!category) throw new Error(`blog post ${row.slug} names category ${row.category_slug}, which was not read`);
      const summary: BlogPostSummary = {
        slug: row.slug,
        title: row.title,
        subtitle: row.subtitle ?? null,
        excerpt: row.excerpt ?? null,
        publishedAt: (row.published_at as Date).toISOString(),
        readingMinutes: row.reading_minutes,
        featured: row.featured,
        authorName: row.author_name ?? null,
        category: { slug: category.slug, name: category.name },
        tags: row.tags as BlogTag[],
        cover: row.cover ?? null,
      };
      const full: BlogPostFull = {
        ...summary,
        content: row.content as BlogContent,
        seoTitle: row.seo_title ?? row.title,
        seoDescription: row.seo_description ?? row.excerpt ?? null,
        updatedAt: (row.updated_at as Date).toISOString(),
      };
      return { at: (row.published_at as Date).getTime(), summary, full };
    });
    return { version, checkedAt: this.clock.now(), epoch: -1, posts, categories };
  }

  /**
   * A strong ETag: the blog's content version, the newest visible time (a scheduled post appearing
   * changes it), the environment and what was asked.
   */
  async etag(envId: number, request: string, moment?: BlogMoment): Promise<string> {
    const { snapshot, view } = moment ?? (await this.current(envId));
    return this.asks.etag(envId, request, (view.etagVersion ??= `b${snapshot.version}.${view.stamp.toString(36)}`));
  }

  /** Visible posts, newest first, optionally of one category or one tag (each must exist: else not-found). */
  async listPosts(env: EnvironmentContext, q: BlogPostsQuery, moment?: BlogMoment): Promise<Page<BlogPostSummary>> {
    const { snapshot, view } = moment ?? (await this.current(env.id));
    if (q.category !== undefined && !snapshot.categories.has(q.category)) throw refuse.notFound('The category', { key: q.category, field: 'category' });
    if (q.tag !== undefined && !view.tags.some((t) => t.slug === q.tag)) throw refuse.notFound('The tag', { key: q.tag, field: 'tag' });
    const posts = filtered(view, q.category, q.tag);
    const listId = `blog-posts|${env.id}|${q.category ?? ''}|${q.tag ?? ''}`;
    return keysetPage(
      this.content.cursors,
      listId,
      q,
      async (after: [number, string] | undefined, take) => {
        const from = after === undefined ? 0 : firstAfter(posts, { at: after[0], slug: after[1] });
        return posts.slice(from, from + take);
      },
      (post): [number, string] => [post.at, post.summary.slug],
      (post) => post.summary,
    );
  }

  /** One visible post and up to RELATED_POSTS others: of its category first, then any, newest first each. */
  async getPost(env: EnvironmentContext, slug: string, moment?: BlogMoment): Promise<BlogPostRead> {
    const { view } = moment ?? (await this.current(env.id));
    const held = view.bySlug.get(slug);
    if (!held) throw refuse.notFound('The post', { key: slug, field: 'slug' });
    const related: BlogPostSummary[] = [];
    const take = (sameCategory: boolean) => {
      for (const other of view.posts) {
        if (related.length >= RELATED_POSTS) return;
        if (other === held || (other.summary.category.slug === held.summary.category.slug) !== sameCategory) continue;
        related.push(other.summary);
      }
    };
    take(true);
    take(false);
    return { post: held.full, related };
  }

  /** Categories with at least one visible post, in console order. */
  async listCategories(env: EnvironmentContext, q: PageRequest, moment?: BlogMoment): Promise<Page<BlogCategoryInfo>> {
    const { view } = moment ?? (await this.current(env.id));
    return pageOfArray(this.content.cursors, `blog-categories|${env.id}`, view.categories, q, (c) => c.slug);
  }

  /** Tags on at least one visible post, by name (then slug). */
  async listTags(env: EnvironmentContext, q: PageRequest, moment?: BlogMoment): Promise<Page<BlogTag>> {
    const { view } = moment ?? (await this.current(env.id));
    return pageOfArray(this.content.cursors, `blog-tags|${env.id}`, view.tags, q, (t) => t.slug);
  }
}

/** The visible posts of one category or tag (or both), built once per view. */
function filtered(view: BlogView, category: string | undefined, tag: string | undefined): HeldPost[] {
  if (category === undefined && tag === undefined) return view.posts;
  const key = `${category ?? ''}|${tag ?? ''}`;
  let posts = view.filtered.get(key);
  if (!posts) {
    posts = view.posts.filter(
      (p) => (category === undefined || p.summary.category.slug === category) && (tag === undefined || p.summary.tags.some((t) => t.slug === tag)),
    );
    view.filtered.set(key, posts);
  }
  return posts;
}

/** What readers see of a snapshot at `now`. Posts are newest first, so the visible ones are a tail. */
function viewAt(snapshot: Snapshot, now: number): BlogView {
  const firstVisible = snapshot.posts.findIndex((p) => p.at <= now);
  const posts = firstVisible < 0 ? [] : snapshot.posts.slice(firstVisible);
  // The scheduled posts are the head; the last of them is the next to appear.
  const scheduled = firstVisible < 0 ? snapshot.posts.length : firstVisible;
  const validUntil = scheduled === 0 ? Infinity : snapshot.posts[scheduled - 1].at;
  const used = new Set(posts.map((p) => p.summary.category.slug));
  const categories = [...snapshot.categories.values()].filter((c) => used.has(c.slug)).map(({ slug, name, description }) => ({ slug, name, description }));
  const tags = new Map<string, BlogTag>();
  for (const post of posts) for (const tag of post.summary.tags) if (!tags.has(tag.slug)) tags.set(tag.slug, { slug: tag.slug, name: tag.name });
  const sortedTags = [...tags.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  return {
    posts,
    bySlug: new Map(posts.map((p) => [p.summary.slug, p])),
    categories,
    tags: sortedTags,
    filtered: new Map(),
    validUntil,
    stamp: posts.length > 0 ? posts[0].at : 0,
  };
}

/** The index of the first post after `position` in the list's order (binary search). */
function firstAfter(posts: HeldPost[], position: { at: number; slug: string }): number {
  let low = 0;
  let high = posts.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const p = posts[mid];
    if (before({ at: p.at, slug: p.summary.slug }, position) || (p.at === position.at && p.summary.slug === position.slug)) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * A page of a short list held in memory (categories, tags), keyed by slug: the cursor names the last
 * slug answered, and the next page starts after it (or, if it is gone since, after where it stood).
 */
async function pageOfArray<T>(codec: CursorCodec, listId: string, items: T[], q: PageRequest, slugOf: (item: T) => string): Promise<Page<T>> {
  return keysetPage(
    codec,
    listId,
    q,
    async (after: [number, string] | undefined, take) => {
      let from = 0;
      if (after !== undefined) {
        const at = items.findIndex((item) => slugOf(item) === after[1]);
        from = at >= 0 ? at + 1 : Math.min(after[0] + 1, items.length);
      }
      return items.slice(from, from + take).map((item, i) => ({ item, index: from + i }));
    },
    ({ item, index }): [number, string] => [index, slugOf(item)],
    ({ item }) => item,
  );
}
