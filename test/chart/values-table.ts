/**
 * The values table of docs/kubernetes.md, helm-docs style, from the `# --` comments of
 * charts/hearth/values.yaml: a `# -- text` line (continued by plain `# ` lines) documents the key on
 * the next line. `make chart-docs` rewrites the table; test/chart/docs.test.ts fails when it differs.
 *
 *   node --import tsx test/chart/values-table.ts --write
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export const VALUES_FILE = path.resolve(__dirname, '..', '..', 'charts', 'hearth', 'values.yaml');
export const DOC_FILE = path.resolve(__dirname, '..', '..', 'docs', 'kubernetes.md');
export const START = '<!-- values-table:start (make chart-docs writes this table from charts/hearth/values.yaml) -->';
export const END = '<!-- values-table:end -->';

export interface ValueRow {
  key: string;
  type: string;
  default: unknown;
  description: string;
}

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'boolean') return 'bool';
  return typeof value; // string, object
}

/** The documented keys of a values file, in the file's order. */
export function documentedValues(text: string): ValueRow[] {
  const values = parse(text) as Record<string, unknown>;
  const rows: ValueRow[] = [];
  const stack: { indent: number; key: string }[] = [];
  let pending: string[] | null = null;
  for (const line of text.split('\n')) {
    const doc = /^\s*# -- (.*)$/.exec(line);
    const more = /^\s*# ?(.*)$/.exec(line);
    const keyLine = /^(\s*)([A-Za-z0-9_.-]+):(\s|$)/.exec(line);
    if (doc) {
      pending = [doc[1].trim()];
    } else if (more && pending) {
      pending.push(more[1].trim());
    } else if (keyLine) {
      const indent = keyLine[1].length;
      while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop();
      stack.push({ indent, key: keyLine[2] });
      if (pending) {
        const keys = stack.map((s) => s.key);
        const value = keys.reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], values);
        // `# -- (int) …` names the type of a value whose default (null) does not show it.
        const hint = /^\((\w+(?:\|\w+)*)\) (.*)$/.exec(pending[0]);
        const description = hint ? [hint[2], ...pending.slice(1)] : pending;
        rows.push({ key: keys.join('.'), type: hint ? hint[1] : typeOf(value), default: value, description: description.join(' ') });
      }
      pending = null;
    } else {
      pending = null; // a blank line or anything else ends a description that documents nothing
    }
  }
  return rows;
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

export function valuesTable(text: string): string {
  const rows = documentedValues(text).map((r) => `| ${r.key} | ${r.type} | \`${cell(JSON.stringify(r.default))}\` | ${cell(r.description)} |`);
  return ['| Key | Type | Default | Description |', '|-----|------|---------|-------------|', ...rows].join('\n');
}

/** The document with its table replaced by the one values.yaml makes. */
export function withTable(doc: string, table: string): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${DOC_FILE} has no ${START} … ${END} markers`);
  return `${doc.slice(0, start + START.length)}\n${table}\n${doc.slice(end)}`;
}

if (require.main === module) {
  const doc = fs.readFileSync(DOC_FILE, 'utf8');
  const next = withTable(doc, valuesTable(fs.readFileSync(VALUES_FILE, 'utf8')));
  if (process.argv.includes('--write')) fs.writeFileSync(DOC_FILE, next);
  else process.stdout.write(next);
}
