import { areaRoutes } from '../../http/route';

/** The legal area's routes (documents and acceptances), with its tag and service said once. */
export const legalRoute = areaRoutes({ tag: 'legal', service: 'legal' });
