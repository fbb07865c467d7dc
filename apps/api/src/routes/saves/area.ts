import { areaRoutes } from '../../http/route';

/** The saves area's routes (save slots), with its tag and service said once. */
export const savesRoute = areaRoutes({ tag: 'saves', service: 'persistence' });
