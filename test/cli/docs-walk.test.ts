/**
 * The laptop walk-throughs that open docs/commerce.md, docs/dashboards.md and docs/licence.md (and
 * the README's first walk), run as written against one `hearth dev` in a checkout of its own
 * (doc-walk.ts): every command must succeed and every `# → ...` must be what it printed, so the docs
 * cannot drift from what `make dev` does. What the walks leave behind is then checked from outside:
 * the licence token verified by the plugin check the tests use (test/support/licence.ts).
 */
import path from 'node:path';
import { createLocalJWKSet } from 'jose';
import { verifyAsPlugin } from '../support/licence';
import { type RunningDev, printedAsSaid, runWalk, startDev, stopDev, walkCheckout, walkOf } from './doc-walk';
import { freePort, tempDir } from './run-hearth';

jest.setTimeout(300_000);

let dev: RunningDev;
let checkout: string;
/** The docs' default addresses → this dev's. */
let addresses: Record<string, string>;

beforeAll(async () => {
  const [port, metricsPort, pgPort, storePort, oidcPort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  checkout = walkCheckout(tempDir());
  dev = await startDev(
    {
      DATA_DIR: path.join(checkout, '.hearth'),
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      HEARTH_DEV_PG_PORT: String(pgPort),
      HEARTH_DEV_STORE_PORT: String(storePort),
      HEARTH_DEV_OIDC_PORT: String(oidcPort),
    },
    checkout,
  );
  addresses = {
    'http://127.0.0.1:8080': `http://127.0.0.1:${port}`,
    'http://127.0.0.1:8091': `http://127.0.0.1:${storePort}`,
    'http://127.0.0.1:8092': `http://127.0.0.1:${oidcPort}`,
  };
}, 180_000);
afterAll(async () => {
  if (dev) expect(await stopDev(dev.child)).toBe(0);
});

/** Runs the walk and holds every annotated step to what the doc says it prints. */
async function walk(doc: string, heading: string, epilogue?: string) {
  const script = walkOf(doc, heading);
  const ran = await runWalk(script, { cwd: checkout, addresses, epilogue });
  expect(ran.steps.length).toBeGreaterThan(0);
  for (const step of ran.steps)
    expect({ command: step.command, printed: step.printed, asSaid: printedAsSaid(step) }).toEqual({
      command: step.command,
      printed: step.printed,
      asSaid: true,
    });
  return ran;
}

test('hearth dev prints its local store, its provider and the demo accounts the docs name', () => {
  const out = dev.output();
  expect(out).toMatch(/store\s+http:\/\/127\.0\.0\.1:\d+ \(the local store/);
  expect(out).toMatch(/sign-in\s+http:\/\/127\.0\.0\.1:\d+ \(the local OpenID Connect provider; client hearth-dashboard/);
  expect(out).toContain('ada / hearth  ada@studio.example: open_dashboard, view_players in demo-dev');
  expect(out).toContain('bob / hearth  bob@studio.example: open_dashboard in demo-dev');
  expect(out).toContain('eve / hearth  eve@studio.example: no member (a sign-in is refused)');
});

test("docs/commerce.md's walk: identify, order, the overlay, completed, what it gave, refund, decline", async () => {
  const ran = await walk('docs/commerce.md', '## On a laptop');
  expect(ran.steps.map((s) => s.expected)).toEqual(expect.arrayContaining(['completed', 'starter-bundle revoked', '[]']));
});

test('the commerce walk runs again on the same dev (a one-time product refunded may be bought again)', async () => {
  await walk('docs/commerce.md', '## On a laptop');
});

test("docs/dashboards.md's walk: sign-in through the local provider with PKCE, a player search, refusals", async () => {
  await walk('docs/dashboards.md', '## On a laptop');
});

test("docs/licence.md's walk ends with a licence token the plugin check accepts", async () => {
  const ran = await walk('docs/licence.md', '## On a laptop', 'printf "%s\\n%s\\n" "$TOKEN" "$(curl -s $BASE/licence/jwks.json)"');
  const [token, jwks] = ran.epilogue.trim().split('\n');
  const payload = await verifyAsPlugin(
    token,
    createLocalJWKSet(JSON.parse(jwks)),
    { audience: 'hearth-licence:demo/demo', product: 'demo-editor' },
    'laptop-1',
  );
  expect(payload).toMatchObject({ sub: 'laptop-1', product: 'demo-editor', type: 'licence', org: 'demo/demo' });
  await expect(
    verifyAsPlugin(token, createLocalJWKSet(JSON.parse(jwks)), { audience: 'hearth-licence:demo/demo', product: 'demo-runtime' }, 'laptop-1'),
  ).rejects.toThrow('a licence for product "demo-editor", not "demo-runtime"');
});

test("the README's first walk runs as written", async () => {
  const ran = await runWalk(walkOf('README.md', '## A first walk through the API'), {
    cwd: checkout,
    addresses,
    epilogue: 'curl -s $BASE/players/me -H "Authorization: Bearer $TOKEN"',
  });
  expect(JSON.parse(ran.epilogue)).toMatchObject({ displayName: 'Ada' });
});
