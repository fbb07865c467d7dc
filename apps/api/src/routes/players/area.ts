import { areaRoutes } from '../../http/route';

/** The players area's routes (a player's own record), with its tag (the area needs no service switch) said once. */
export const playersRoute = areaRoutes({ tag: 'players' });
