import { areaRoutes } from '../../http/route';

/** The support area's routes (support requests and player reports), with its tag and service said once. */
export const supportRoute = areaRoutes({ tag: 'support', service: 'support' });
