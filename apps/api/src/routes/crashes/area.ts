import { areaRoutes } from '../../http/route';

/** The crashes area's routes (uploads, symbol files), with its tag and service said once. */
export const crashesRoute = areaRoutes({ tag: 'crashes', service: 'crashes' });
