/**
 * The README's "Documentation" names every guide in docs/ (so a new one cannot be missed by a reader
 * who starts there), each link resolving to a file.
 */
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

test('every guide in docs/ is linked from the README, and every link there resolves', () => {
  const section = readme.slice(readme.indexOf('## Documentation'));
  expect(section.startsWith('## Documentation')).toBe(true);
  const linked = [...section.matchAll(/\]\((docs\/[^)#]+)\)/g)].map((m) => m[1]);
  for (const link of linked) expect({ link, exists: fs.existsSync(path.join(root, link)) }).toEqual({ link, exists: true });
  const guides = fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  expect([...new Set(linked)].sort()).toEqual(guides.sort());
});
