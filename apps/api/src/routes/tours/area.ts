import { areaRoutes } from '../../http/route';

/** The tours area's routes (the tours a player completes), with its tag and service said once. */
export const toursRoute = areaRoutes({ tag: 'tours', service: 'tours' });
