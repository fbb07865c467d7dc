import { areaRoutes } from '../../http/route';

/** The blog area's routes (posts, categories, tags), with its tag and service said once. */
export const blogRoute = areaRoutes({ tag: 'blog', service: 'blog' });
