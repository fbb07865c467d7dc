import { areaRoutes } from '../../http/route';

/** The progression area's routes (unlocks, skill trees, XP), with its tag and service said once. */
export const progressionRoute = areaRoutes({ tag: 'progression', service: 'progression' });
