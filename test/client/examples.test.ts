/**
 * docs/sdk.md's two walk-throughs are files (apps/client/examples) quoted whole in the doc: each is
 * the same text in both places, and each runs against a real API as its comment says.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Harness, startHarness } from '../support/harness';
import { currency, gameConfig, standardManifests } from '../support/manifests';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');
const EXAMPLES = ['apps/client/examples/game-server.ts', 'apps/client/examples/game-client.ts'];

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      currency('gold', { environment: 'alpha-live', name: 'Gold', scope: 'account', kind: 'balance' }),
      gameConfig('alpha-live-config', { environment: 'alpha-live', flags: [{ name: 'new_shop', enabled: true }] }),
    ],
  });
});

afterAll(async () => {
  await h?.close();
});

test('docs/sdk.md quotes each example file whole', () => {
  const doc = readFileSync(path.join(ROOT, 'docs', 'sdk.md'), 'utf8');
  for (const file of EXAMPLES) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    expect({ file, quoted: doc.includes(`<!-- example: ${file} -->\n\`\`\`ts\n${text}\`\`\``) }).toEqual({ file, quoted: true });
  }
});

test("the game server's example signs a player in and credits once; the client's example reads as that player", async () => {
  const env = { ...process.env, HEARTH_URL: h.base, HEARTH_SERVER_KEY: h.serverKeys['alpha-live-key'] };
  const server = await run(process.execPath, ['--import', 'tsx', EXAMPLES[0]], { cwd: ROOT, env });
  const tokens = JSON.parse(server.stdout);
  expect(server.stderr).toContain('credited 100 gold; balance 100');
  expect(server.stderr).toContain('refused: holds 100');
  expect(server.stderr).toContain('flags: new_shop=true');

  const client = await run(process.execPath, ['--import', 'tsx', EXAMPLES[1]], { cwd: ROOT, env: { ...env, HEARTH_TOKENS: JSON.stringify(tokens) } });
  expect(JSON.parse(client.stdout)).toEqual({ player: tokens.player.id, shopOpen: true, refused: 'forbidden' });
  expect(client.stderr).toContain('signed in as Ann');
  expect(client.stderr).toContain('gold: 100');
});
