/**
 * The blog (spec §2 post, category, tag; §4 Blog): the answers of the reads and what a read may ask,
 * declared once for the route's validation, the document and the blog service. The TypeScript names
 * differ from the document's (BlogCategoryInfo is `BlogCategory`, BlogPostFull `BlogPost`): core's
 * BlogCategory and BlogPost are the manifest kinds.
 */
import { Type, type Static } from '@sinclair/typebox';
import { BlogContentAnswer } from '../contract/blog-content';
import { PageQuery, Shape, Timestamp } from './common';

/** A category's or a tag's slug, or a post's. */
const Slug = (description: string) => Type.String({ minLength: 1, maxLength: 120, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', description });
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const BlogTag = Shape('BlogTag', { slug: Type.String(), name: Type.String() });
export type BlogTag = Static<typeof BlogTag>;

/** A category as GET /blog/categories lists it. */
export const BlogCategoryInfo = Shape('BlogCategory', { slug: Type.String(), name: Type.String(), description: NullableString });
export type BlogCategoryInfo = Static<typeof BlogCategoryInfo>;

/** A post's category, as the post names it. */
export const BlogCategoryRef = Shape('BlogPostCategory', { slug: Type.String(), name: Type.String() });
export type BlogCategoryRef = Static<typeof BlogCategoryRef>;

const summaryFields = {
  slug: Type.String(),
  title: Type.String(),
  subtitle: NullableString,
  excerpt: NullableString,
  publishedAt: Timestamp,
  readingMinutes: Type.Integer({ minimum: 1, description: 'given by the post, or its words at 200 a minute, rounded up' }),
  featured: Type.Boolean(),
  authorName: NullableString,
  category: BlogCategoryRef,
  tags: Type.Array(BlogTag),
  cover: Type.Union([Type.String({ description: 'an image address' }), Type.Null()]),
};
/** Spec §2 post summary. */
export const BlogPostSummary = Shape('BlogPostSummary', summaryFields);
export type BlogPostSummary = Static<typeof BlogPostSummary>;

/** Spec §2 post: the summary, its content and what search engines are told. */
export const BlogPostFull = Shape('BlogPost', {
  ...summaryFields,
  content: BlogContentAnswer,
  seoTitle: Type.String({ description: 'the title when the post gives none' }),
  seoDescription: Type.Union([Type.String(), Type.Null()], { description: 'the excerpt when the post gives none' }),
  updatedAt: Timestamp,
});
export type BlogPostFull = Static<typeof BlogPostFull>;

/** How many related posts a post is answered with. */
export const RELATED_POSTS = 3;

/** GET /blog/posts/:slug: the post and up to RELATED_POSTS related ones. */
export const BlogPostRead = Type.Object(
  { post: BlogPostFull, related: Type.Array(BlogPostSummary, { maxItems: RELATED_POSTS }) },
  { additionalProperties: false },
);
export type BlogPostRead = Static<typeof BlogPostRead>;

/** GET /blog/posts: one category's or one tag's posts (or both), or all. */
export const BlogPostsQuery = Type.Object(
  { category: Type.Optional(Slug('a category slug')), tag: Type.Optional(Slug('a tag slug')), ...PageQuery },
  { additionalProperties: false },
);
export type BlogPostsQuery = Static<typeof BlogPostsQuery>;

export const BlogPostPath = Type.Object({ slug: Slug('the post slug') }, { additionalProperties: false });
