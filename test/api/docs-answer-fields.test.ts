/**
 * Every field an answer of the API carries is explained where a user finds it: each property name of
 * every schema the OpenAPI document answers with (the success answers, the error shape and its
 * details, every named component they use) appears in backticks in some page of docs/. The document
 * is the one `GET /openapi.json` serves, built from the route table; a field added to a shape without
 * a word in the docs fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildOpenApi, routeTable } from '@hearth/api';

const DOCS = path.resolve(__dirname, '../../docs');

type Json = Record<string, unknown>;

/** Every property name under `node`, following `$ref`s into the document's components. */
function propertyNames(doc: Json, node: unknown, names: Set<string>, seen: Set<unknown>): void {
  if (node === null || typeof node !== 'object' || seen.has(node)) return;
  seen.add(node);
  if (Array.isArray(node)) {
    for (const item of node) propertyNames(doc, item, names, seen);
    return;
  }
  const object = node as Json;
  if (typeof object.$ref === 'string') {
    const target = object.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((at, part) => (at as Json | undefined)?.[part], doc);
    propertyNames(doc, target, names, seen);
  }
  if (object.properties && typeof object.properties === 'object') {
    for (const name of Object.keys(object.properties)) names.add(name);
  }
  for (const [key, value] of Object.entries(object)) if (key !== 'example' && key !== 'examples') propertyNames(doc, value, names, seen);
}

/** Every schema an operation answers with: its responses' bodies and headers are what a client reads. */
function answeredNames(): Map<string, string[]> {
  const doc = buildOpenApi(routeTable()) as unknown as Json;
  const where = new Map<string, string[]>();
  for (const [p, operations] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Json>)) {
        const names = new Set<string>();
        propertyNames(doc, (response as Json).content, names, new Set());
        for (const name of names) where.set(name, [...(where.get(name) ?? []), `${method.toUpperCase()} ${p} ${status}`]);
      }
    }
  }
  return where;
}

/**
 * The words inside backticks of every page of docs/: inline code (which may run over a line break:
 * `{ items, next }` gives items and next) and fenced blocks (a JSON example names its fields).
 */
function backtickedWords(): Set<string> {
  const words = new Set<string>();
  const add = (code: string) => {
    for (const word of code.split(/[^A-Za-z0-9_-]+/)) if (word) words.add(word);
  };
  for (const file of fs.readdirSync(DOCS).filter((f) => f.endsWith('.md'))) {
    const parts = fs.readFileSync(path.join(DOCS, file), 'utf8').split(/^[ \t]*```.*$/m);
    parts.forEach((part, i) => {
      if (i % 2 === 1) add(part);
      // Inline code ends at its paragraph: a span never runs over a blank line.
      else for (const span of part.matchAll(/`((?:[^`\n]|\n(?![ \t]*\n))+)`/g)) add(span[1]);
    });
  }
  return words;
}

test('every property of every answer is named in backticks in some page of docs/', () => {
  const answered = answeredNames();
  expect(answered.size).toBeGreaterThan(100);
  const documented = backtickedWords();
  const missing = [...answered.keys()].filter((name) => !documented.has(name)).sort();
  expect(missing.map((name) => `${name} (${answered.get(name)![0]})`)).toEqual([]);
});
