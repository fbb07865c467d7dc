/**
 * Writes the API's OpenAPI document to stdout: the one GET /openapi.json serves, built from the route
 * table by the same function (test/api/openapi.test.ts holds the two equal).
 */
import { buildOpenApi, routeTable } from '@hearth/api';

process.stdout.write(`${JSON.stringify(buildOpenApi(routeTable()), null, 2)}\n`);
