import { releaseBlogCategory, syncBlogCategory } from '../../blog/sync';
import { inTransaction } from '../../db/transaction';
import type { BlogCategory } from '../schemas';
import { type Reconciler, environmentNamed, namespaceOf, refusalsNamed } from './shared';

/** The owner a blog row carries: its document's `namespace/name`, unique across the deployment. */
export function blogOwnerOf(manifest: { namespace: string; name: string }): string {
  return `${manifest.namespace}/${manifest.name}`;
}

/**
 * A BlogCategory is one category of its environment's blog, its slug `spec.slug` or else its name.
 * Deleted (or moved), it goes only once no post is in it.
 */
export const blogCategoryReconciler: Reconciler<BlogCategory> = {
  reconcile: (db, doc, { bus, label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const { environment: _environment, ...category } = doc.spec;
      const owner = blogOwnerOf({ namespace, name: doc.metadata.name });
      return {
        action: await refusalsNamed(label, () =>
          syncBlogCategory(trx, bus, { environmentId: env.id, owner, category: { ...category, slug: category.slug ?? doc.metadata.name } }),
        ),
      };
    }),

  remove: async (db, manifest, { bus }) => ((await releaseBlogCategory(db, bus, blogOwnerOf(manifest))) ? 'removed' : 'absent'),
};
