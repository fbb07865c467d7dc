import { areaRoutes } from '../../http/route';

/** The stats area's routes (players' and the environment's counters), with its tag and service said once. */
export const statsRoute = areaRoutes({ tag: 'stats', service: 'stats' });
