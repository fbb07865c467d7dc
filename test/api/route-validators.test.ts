/**
 * A route's validators (path parameters, query, body) are compiled by the first request that needs
 * them, not when the app is built (apps/api/src/http/pipeline.ts, compiledOnUse): so a schema ajv
 * cannot compile would show only when its route is first called. Every route's are compiled here.
 */
import { routeTable } from '@hearth/api';
import { compileRoute } from '../../apps/api/src/http/pipeline';

const table = routeTable();

test("every route's path, query and body schemas compile, and each is compiled once", () => {
  let validators = 0;
  for (const route of table) {
    const compiled = compileRoute(route);
    for (const part of ['params', 'query', 'body'] as const) {
      const validator = compiled[part];
      expect({ route: route.operationId, part, declared: route[part] !== undefined }).toEqual({
        route: route.operationId,
        part,
        declared: validator !== undefined,
      });
      if (!validator) continue;
      const first = validator();
      expect(typeof first).toBe('function');
      expect(validator()).toBe(first);
      validators++;
    }
  }
  expect(validators).toBeGreaterThan(table.length);
});
