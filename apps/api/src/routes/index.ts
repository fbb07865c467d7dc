import type { AnyRoute } from '../http/route';
import type { ApiDocumentAbout } from '@hearth/core';
import { buildOpenApi, type OpenApiDocument } from '../http/openapi';
import { referenceRoutes } from './reference';
import { authRoutes } from './auth';
import { playerRoutes } from './players';
import { configRoutes } from './config';
import { realtimeRoutes } from './realtime';
import { blogRoutes } from './blog';
import { sessionRoutes } from './sessions';
import { legalRoutes } from './legal';
import { tourRoutes } from './tours';
import { saveRoutes } from './saves';
import { supportRoutes } from './support';
import { economyRoutes } from './economy';
import { itemRoutes } from './items';
import { cardRoutes } from './cards';
import { progressionRoutes } from './progression';
import { statRoutes } from './stats';
import { crashRoutes } from './crashes';
import { licenceRoutes } from './licence';
import { dashboardRoutes } from './dashboards';
import { commerceRoutes } from './commerce';

/**
 * The route table: every route of the API, each area by one line, its list (routes/<area>/index.ts).
 * Routing does not depend on the order, nor does the OpenAPI document, whose paths come in the spec's
 * order (SPEC_ROUTE_ORDER, http/route-order.ts).
 */
export function routeTable(extra: AnyRoute[] = [], about?: ApiDocumentAbout): AnyRoute[] {
  let document: OpenApiDocument | undefined;
  const routes: AnyRoute[] = [
    ...referenceRoutes(() => (document ??= buildOpenApi(routes, about))),
    ...authRoutes,
    ...playerRoutes,
    ...configRoutes,
    ...realtimeRoutes,
    ...sessionRoutes,
    ...legalRoutes,
    ...tourRoutes,
    ...blogRoutes,
    ...supportRoutes,
    ...saveRoutes,
    ...crashRoutes,
    ...commerceRoutes,
    ...economyRoutes,
    ...itemRoutes,
    ...cardRoutes,
    ...progressionRoutes,
    ...statRoutes,
    ...licenceRoutes,
    ...dashboardRoutes,
    ...extra,
  ];
  return routes;
}
