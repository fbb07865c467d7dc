import { areaRoutes } from '../../http/route';

/** The auth area's routes (sign-ins and token refresh), with its tag (the area needs no service switch) said once. */
export const authRoute = areaRoutes({ tag: 'auth' });
