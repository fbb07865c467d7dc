import { areaRoutes } from '../../http/route';

/** The sessions area's routes (game sessions and their seats), with its tag and service said once. */
export const sessionsRoute = areaRoutes({ tag: 'sessions', service: 'sessions' });
