/**
 * The `unknown`s openapi-typescript wrote (file in argv[2]) that stand where the document declares a
 * shape: printed one a line, exit 1 when there is any. Allowed: the values of a free-form object or
 * of undeclared headers (`[key: string]: unknown`), and a value documented as any JSON value (a save).
 */
import { readFileSync } from 'node:fs';

const lines = readFileSync(process.argv[2], 'utf8').split('\n');
const found: string[] = [];
let comment = '';
lines.forEach((line, i) => {
  const text = line.trim();
  if (text.startsWith('/**') || text.startsWith('*')) {
    comment = text.startsWith('/**') ? text : `${comment} ${text}`;
    return;
  }
  // A string literal type is words, not a type (`"unknown-card-type"`, a deck problem's code).
  const types = text.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  if (/\bunknown\b/.test(types) && !/^\[(key|name): string\]: unknown;$/.test(text) && !/any JSON value/.test(comment)) found.push(`${i + 1}: ${text}`);
  comment = '';
});
if (found.length > 0) {
  process.stderr.write(`openapi-typescript typed these as unknown:\n${found.join('\n')}\n`);
  process.exit(1);
}
