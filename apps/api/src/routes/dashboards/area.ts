import { areaRoutes } from '../../http/route';

/** The dashboards area's routes (the custom dashboards' sign-in and reads), with its tag said once (no service switch turns them off). */
export const dashboardsRoute = areaRoutes({ tag: 'dashboards' });
