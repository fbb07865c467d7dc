/** The blog area's kinds: its categories, then the posts in them. */
import { BlogCategorySpec, BlogPostSpec } from '../../contract/resources';
import { releaseBlogCategory, releaseBlogPost, syncBlogCategory, syncBlogPost } from '../../blog/sync';
import { ENVIRONMENT_COLUMN, manifestKind, specColumn } from '../kind';
import { contentReconciler } from '../reconciler';

/**
 * A BlogCategory is one category of its environment's blog, its slug `spec.slug` or else its name.
 * Deleted (or moved), it goes only once no post is in it.
 */
const BlogCategory = manifestKind('BlogCategory', BlogCategorySpec, {
  crd: { plural: 'blogcategories', shortNames: ['blogcat'], columns: [ENVIRONMENT_COLUMN] },
  reconciler: contentReconciler({
    sync: (trx, place, { metadata, spec: { environment: _environment, ...category } }, bus) =>
      syncBlogCategory(trx, bus, { ...place, category: { ...category, slug: category.slug ?? metadata.name } }),
    release: (db, owner, bus) => releaseBlogCategory(db, bus, owner),
  }),
});

/**
 * A BlogPost is one post of its environment's blog, its slug `spec.slug` or else its name, in a
 * category of the same environment. Deleted, it goes from whichever environment holds it.
 */
const BlogPost = manifestKind('BlogPost', BlogPostSpec, {
  crd: {
    plural: 'blogposts',
    shortNames: ['blogpost'],
    columns: [ENVIRONMENT_COLUMN, specColumn('Category', 'string', 'category'), specColumn('Status', 'string', 'status')],
  },
  reconciler: contentReconciler({
    sync: (trx, place, { metadata, spec: { environment: _environment, ...post } }, bus) =>
      syncBlogPost(trx, bus, { ...place, post: { ...post, slug: post.slug ?? metadata.name } }),
    release: (db, owner, bus) => releaseBlogPost(db, bus, owner),
  }),
});

export const blogKinds = { BlogCategory, BlogPost };
