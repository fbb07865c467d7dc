import { areaRoutes } from '../../http/route';

/** The players area's routes (a player's own record), with its tag said once (no service switch turns them off). */
export const playersRoute = areaRoutes({ tag: 'players' });
