/**
 * The areas of apps/core/src depend on each other one way: no area imports, even for a type, an area
 * that imports it back, however far round (docs/architecture.md "Layers"). dependency-cruiser's graph
 * of core collapsed to its folders (the same tool `make lint` runs file by file), searched for cycles.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

test('the graph of core folders has no cycle', () => {
  const out = execFileSync(
    path.join(ROOT, 'node_modules', '.bin', 'depcruise'),
    ['apps/core/src', '--config', '.dependency-cruiser.cjs', '--collapse', '^apps/core/src/[^/]+/', '--output-type', 'json'],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const graph = new Map<string, Set<string>>();
  for (const module of JSON.parse(out).modules as { source: string; dependencies: { resolved: string }[] }[]) {
    for (const { resolved } of module.dependencies) {
      if (resolved === module.source || !resolved.startsWith('apps/core/src/') || !module.source.startsWith('apps/core/src/')) continue;
      graph.set(module.source, (graph.get(module.source) ?? new Set()).add(resolved));
    }
  }
  expect(graph.size).toBeGreaterThan(20);

  // Depth-first: a folder met again while it is still on the path closes a cycle.
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, trail: string[]) => {
    state.set(node, 'open');
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...trail.slice(trail.indexOf(next)), node, next].join(' → '));
      else if (!state.has(next)) visit(next, [...trail, node]);
    }
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node, []);
  expect(cycles).toEqual([]);
});
