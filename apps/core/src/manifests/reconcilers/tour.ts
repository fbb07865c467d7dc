import { releaseTour, syncTour, tourContent } from '../../tours/tours';
import type { TourManifestT } from '../schemas';
import { contentReconciler } from './shared';

/** A Tour stands for one tour of its environment, keyed by `spec.id` (or metadata.name). Deleted, the tour goes. */
export const tourReconciler = contentReconciler<TourManifestT>({
  sync: (trx, place, doc) => syncTour(trx, { ...place, content: tourContent(doc) }),
  release: (db, owner) => releaseTour(db, owner),
  rows: { table: 'tours', keyField: 'id' },
});
