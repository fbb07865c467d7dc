import { releaseBlogPost, syncBlogPost } from '../../blog/sync';
import { inTransaction } from '../../db/transaction';
import type { BlogPost } from '../schemas';
import { blogOwnerOf } from './blog-category';
import { type Reconciler, environmentNamed, namespaceOf, refusalsNamed } from './shared';

/**
 * A BlogPost is one post of its environment's blog, its slug `spec.slug` or else its name, in a
 * category of the same environment. Deleted, it goes from whichever environment holds it.
 */
export const blogPostReconciler: Reconciler<BlogPost> = {
  reconcile: (db, doc, { bus, label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const { environment: _environment, ...post } = doc.spec;
      const owner = blogOwnerOf({ namespace, name: doc.metadata.name });
      return {
        action: await refusalsNamed(label, () =>
          syncBlogPost(trx, bus, { environmentId: env.id, owner, post: { ...post, slug: post.slug ?? doc.metadata.name } }),
        ),
      };
    }),

  remove: async (db, manifest, { bus }) => ((await releaseBlogPost(db, bus, blogOwnerOf(manifest))) ? 'removed' : 'absent'),
};
