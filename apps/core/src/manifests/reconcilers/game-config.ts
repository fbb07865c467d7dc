import { releaseGameConfig, syncGameConfig } from '../../content/game-config-sync';
import type { GameConfig } from '../schemas';
import { contentReconciler } from './shared';

/**
 * A GameConfig owns the values, tables and flags it lists in its environment: reconciling makes that
 * environment's rows of this owner exactly those (see syncGameConfig). Deleted, its rows go, in
 * whichever environment they are.
 */
export const gameConfigReconciler = contentReconciler<GameConfig>({
  sync: (trx, place, { spec: { environment: _environment, ...content } }, bus) => syncGameConfig(trx, bus, { ...place, content }),
  release: (db, owner, bus) => releaseGameConfig(db, bus, owner),
});
