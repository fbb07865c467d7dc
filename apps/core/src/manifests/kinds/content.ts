/** The content area's kind: an environment's config values, tables and flags. */
import { GameConfigSpec } from '../../contract/resources';
import { releaseGameConfig, syncGameConfig } from '../../content/game-config-sync';
import { ENVIRONMENT_COLUMN, manifestKind } from '../kind';
import { contentReconciler } from '../reconciler';

/**
 * A GameConfig owns the values, tables and flags it lists in its environment: reconciling makes that
 * environment's rows of this owner exactly those (see syncGameConfig). Deleted, its rows go, in
 * whichever environment they are.
 */
const GameConfig = manifestKind('GameConfig', GameConfigSpec, {
  crd: { plural: 'gameconfigs', shortNames: ['gconf'], columns: [ENVIRONMENT_COLUMN] },
  reconciler: contentReconciler({
    sync: (trx, place, { spec: { environment: _environment, ...content } }, bus) => syncGameConfig(trx, bus, { ...place, content }),
    release: (db, owner, bus) => releaseGameConfig(db, bus, owner),
  }),
});

export const contentKinds = { GameConfig };
