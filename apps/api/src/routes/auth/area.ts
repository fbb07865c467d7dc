import { areaRoutes } from '../../http/route';

/** The auth area's routes (sign-ins and token refresh), with its tag said once (no service switch turns them off). */
export const authRoute = areaRoutes({ tag: 'auth' });
