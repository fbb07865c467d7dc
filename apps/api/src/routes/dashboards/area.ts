import { areaRoutes } from '../../http/route';

/** The dashboards area's routes (the custom dashboards' sign-in and reads), with its tag (the area needs no service switch) said once. */
export const dashboardsRoute = areaRoutes({ tag: 'dashboards' });
