/**
 * The read-only blog (spec §4 Blog): published posts, their categories and tags, answered from the
 * process's in-memory copy of the environment's blog (BlogService), with a strong ETag.
 */
import { BlogCategoryInfo, BlogPostPath, BlogPostRead, BlogPostsQuery, BlogPostSummary, BlogTag, PageOf, PageOnlyQuery } from '@hearth/core/shapes';
import type { BlogMoment } from '@hearth/core/blog';
import type { HandlerContext, AnyRoute } from '../../http/route';
import { blogRoute } from './area';

function blogEtag(ctx: HandlerContext<unknown, unknown, unknown, 'either'>, ask: string): Promise<string> {
  return ctx.core.blog.etag(ctx.env.id, ask);
}

/** What every blog read declares alike: a GET for either credential, conditional on the blog's ETag. */
const blogRead = { method: 'GET', credential: 'either', etag: blogEtag } as const;

/** A read's answer: the body and its ETag from one moment of the blog (never a new body under an old ETag). */
async function momentAnswer<T>(
  ctx: HandlerContext<unknown, unknown, unknown, 'either'>,
  read: (moment: BlogMoment) => Promise<T>,
): Promise<{ body: T; headers: Record<string, string> }> {
  const moment = await ctx.core.blog.current(ctx.env.id);
  const body = await read(moment);
  return { body, headers: { ETag: await ctx.core.blog.etag(ctx.env.id, ctx.ask, moment) } };
}

export const listBlogPosts = blogRoute({
  ...blogRead,
  operationId: 'listBlogPosts',
  path: '/blog/posts',
  summary: 'Published posts, newest first',
  description: 'Ordered by publishedAt, newest first, then by slug. `category` or `tag` (or both) narrow the list; one that does not exist is not-found.',
  query: BlogPostsQuery,
  success: { status: 200, description: 'A page of post summaries', schema: PageOf(BlogPostSummary) },
  links: [{ parameters: { slug: '$response.body#/items/0/slug' } }],
  refusals: ['not-found'],
  handler: (ctx) => momentAnswer(ctx, (moment) => ctx.core.blog.listPosts(ctx.env, ctx.query, moment)),
});

export const getBlogPost = blogRoute({
  ...blogRead,
  operationId: 'getBlogPost',
  path: '/blog/posts/:slug',
  summary: 'One published post and related posts',
  description: 'Drafts and scheduled posts not yet due are not-found. `related`: up to 3 other published posts, of the same category first, newest first.',
  params: BlogPostPath,
  success: { status: 200, description: 'The post', schema: BlogPostRead },
  refusals: ['not-found'],
  handler: (ctx) => momentAnswer(ctx, (moment) => ctx.core.blog.getPost(ctx.env, ctx.params.slug, moment)),
});

export const listBlogCategories = blogRoute({
  ...blogRead,
  operationId: 'listBlogCategories',
  path: '/blog/categories',
  summary: 'Categories with a published post, in console order',
  description:
    "Pages through the categories that hold at least one published post, in the order the blog's manifests give them. Cached by ETag (304 while unchanged).",
  query: PageOnlyQuery,
  success: { status: 200, description: 'A page of categories', schema: PageOf(BlogCategoryInfo) },
  refusals: [],
  handler: (ctx) => momentAnswer(ctx, (moment) => ctx.core.blog.listCategories(ctx.env, ctx.query, moment)),
});

export const listBlogTags = blogRoute({
  ...blogRead,
  operationId: 'listBlogTags',
  path: '/blog/tags',
  summary: 'Tags on a published post, by name',
  description: 'Pages through the tags carried by at least one published post, by name. Cached by ETag (304 while unchanged).',
  query: PageOnlyQuery,
  success: { status: 200, description: 'A page of tags', schema: PageOf(BlogTag) },
  refusals: [],
  handler: (ctx) => momentAnswer(ctx, (moment) => ctx.core.blog.listTags(ctx.env, ctx.query, moment)),
});

/** The blog area's routes: routes/index.ts registers them by this one name. */
export const blogRoutes: AnyRoute[] = [listBlogPosts, getBlogPost, listBlogCategories, listBlogTags];
