/**
 * The blog's answer shapes (spec §2 Blog, GET /blog/*): the API answers them and BlogService's types
 * are their Static<>.
 */
import { Type, type Static } from '@sinclair/typebox';
import { BlogContentAnswer } from '../contract/blog-content';
import { Timestamp } from './common';

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const BlogTagShape = Type.Object({ slug: Type.String(), name: Type.String() }, { $id: 'BlogTag', additionalProperties: false });
export type BlogTag = Static<typeof BlogTagShape>;

/** A category as GET /blog/categories lists it. */
export const BlogCategoryShape = Type.Object({ slug: Type.String(), name: Type.String(), description: NullableString }, { $id: 'BlogCategory', additionalProperties: false });
export type BlogCategoryInfo = Static<typeof BlogCategoryShape>;

/** A post's category, as the post names it. */
const BlogPostCategory = Type.Object({ slug: Type.String(), name: Type.String() }, { $id: 'BlogPostCategory', additionalProperties: false });
export type BlogCategoryRef = Static<typeof BlogPostCategory>;

const summaryFields = {
  slug: Type.String(),
  title: Type.String(),
  subtitle: NullableString,
  excerpt: NullableString,
  publishedAt: Timestamp,
  readingMinutes: Type.Integer({ minimum: 1, description: 'given by the post, or its words at 200 a minute, rounded up' }),
  featured: Type.Boolean(),
  authorName: NullableString,
  category: BlogPostCategory,
  tags: Type.Array(BlogTagShape),
  cover: Type.Union([Type.String({ description: 'an image address' }), Type.Null()]),
};

/** Spec §2 post summary. */
export const BlogPostSummaryShape = Type.Object(summaryFields, { $id: 'BlogPostSummary', additionalProperties: false });
export type BlogPostSummary = Static<typeof BlogPostSummaryShape>;

/** Spec §2 post: the summary, its content and what search engines are told. */
export const BlogPostShape = Type.Object(
  {
    ...summaryFields,
    content: BlogContentAnswer,
    seoTitle: Type.String({ description: 'the title when the post gives none' }),
    seoDescription: Type.Union([Type.String(), Type.Null()], { description: 'the excerpt when the post gives none' }),
    updatedAt: Timestamp,
  },
  { $id: 'BlogPost', additionalProperties: false },
);
export type BlogPostFull = Static<typeof BlogPostShape>;
