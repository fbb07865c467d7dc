import { releaseBlogPost, syncBlogPost } from '../../blog/sync';
import type { BlogPost } from '../schemas';
import { contentReconciler } from './shared';

/**
 * A BlogPost is one post of its environment's blog, its slug `spec.slug` or else its name, in a
 * category of the same environment. Deleted, it goes from whichever environment holds it.
 */
export const blogPostReconciler = contentReconciler<BlogPost>({
  sync: (trx, place, { metadata, spec: { environment: _environment, ...post } }, bus) =>
    syncBlogPost(trx, bus, { ...place, post: { ...post, slug: post.slug ?? metadata.name } }),
  release: (db, owner, bus) => releaseBlogPost(db, bus, owner),
});
