/** The tours area's kind: a tour players may complete. */
import { TourSpec } from '../../contract/resources';
import { releaseTour, syncTour, tourContent } from '../../tours/tours';
import { ENABLED_COLUMN, ENVIRONMENT_COLUMN, manifestKind } from '../kind';
import { contentReconciler } from '../reconciler';

/** A Tour stands for one tour of its environment, keyed by `spec.id` (or metadata.name). Deleted, the tour goes. */
const Tour = manifestKind('Tour', TourSpec, {
  crd: { plural: 'tours', shortNames: ['htour'], columns: [ENVIRONMENT_COLUMN, ENABLED_COLUMN] },
  reconciler: contentReconciler({
    sync: (trx, place, doc) => syncTour(trx, { ...place, content: tourContent(doc) }),
    release: (db, owner) => releaseTour(db, owner),
    rows: { table: 'tours', keyField: 'id' },
  }),
});

export const tourKinds = { Tour };
