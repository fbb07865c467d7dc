import { areaRoutes } from '../../http/route';

/** The licence area's routes (seats and their keys' JWKS), with its tag said once (they belong to no environment, so no service switch). */
export const licenceRoute = areaRoutes({ tag: 'licence' });
