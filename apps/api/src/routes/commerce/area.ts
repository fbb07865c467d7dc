import { areaRoutes } from '../../http/route';

/** The commerce area's routes (catalog, orders, entitlements, grants), with its tag and service said once. */
export const commerceRoute = areaRoutes({ tag: 'commerce', service: 'commerce' });
