import { releaseBlogCategory, syncBlogCategory } from '../../blog/sync';
import type { BlogCategory } from '../schemas';
import { contentReconciler } from './shared';

/**
 * A BlogCategory is one category of its environment's blog, its slug `spec.slug` or else its name.
 * Deleted (or moved), it goes only once no post is in it.
 */
export const blogCategoryReconciler = contentReconciler<BlogCategory>({
  sync: (trx, place, { metadata, spec: { environment: _environment, ...category } }, bus) =>
    syncBlogCategory(trx, bus, { ...place, category: { ...category, slug: category.slug ?? metadata.name } }),
  release: (db, owner, bus) => releaseBlogCategory(db, bus, owner),
});
