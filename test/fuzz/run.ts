/**
 * `make fuzz` (`node --import tsx test/fuzz/run.ts`): schemathesis against a real `hearth api`, from
 * the API's own GET /v1/openapi.json; exits non-zero on any failed check (docs/reliability.md).
 *
 * 1. schemathesis from the tools folder (test/fuzz/install.sh installs the pinned version once per
 *    machine: `make fuzz-tools`).
 * 2. A fresh PostgreSQL database, migrated by `hearth migrate`, and the tests' standard manifests
 *    (test/support/manifests.ts: two projects' environments, their server keys, plus a currency and an
 *    item type so the economy routes have something to find) applied by `hearth apply -f`; object
 *    storage in a folder of the run (file://), so the crash and symbol routes work; the stand-ins of the
 *    outside services alpha's settings name (its dashboard's OpenID provider, its store: the stand-in
 *    store approving every order at once), so those routes do their work rather than answer 503.
 * 3. `hearth api` on a free 127.0.0.1 port. In each of two environments of one project (alpha-live, the
 *    run's credentials; alpha-test, the foreign one) the run makes players, sessions, saves, balances and
 *    items through the API, and writes a config of its own: the repository's plus dictionaries of those
 *    ids (path parameters are drawn from them half the time) and the hooks (test/fuzz/hooks.py, the
 *    foreign_ids_stay_foreign check: the other environment's ids are refused and never shown).
 * 4. schemathesis runs with that config, the credentials given per security scheme (serverKey,
 *    playerToken, dashboardToken: alpha-live's; licenceKey: its project alpha's; each operation gets the one it declares). Two runs: every operation but
 *    the two that end the player's credential (DELETE /players/me, POST /players/me/signout), then those
 *    two, so the player token stays good while the rest is fuzzed. Then a canary: told that alpha-live's
 *    own players are foreign, a short run must fail the cross-environment check, or the check is dead.
 *    `--only id,id` runs the main run over those operations alone (and neither the canary nor the
 *    credential-ending run): to fuzz one area while working on it.
 * 5. A summary: cases, failures by check, duration. The API, database and Redis keys are cleaned up
 *    whatever happened; logs and reports stay in $TMPDIR/hearth-fuzz/<run>/.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { freePort } from '../support/ports';
import { type HearthService, hearthEnv, logTail, makeScratchRun, runHearthLogged, startHearthService, waitReady } from '../support/hearth-process';
import { stopProcess } from '../support/processes';
import { InvalidationBus, loadConfig } from '@hearth/core';
import { MemoryCoordination } from '@hearth/core/coord';
import { TokenService } from '@hearth/core/auth';
import { createDb } from '@hearth/core/db';
import { secretVariableOf } from '@hearth/core/dashboards';
import { NAMESPACE, currency, itemType, licenceKey, product, project, skillTree, standardManifests, tour } from '../support/manifests';
import { StoreStandIn } from '../support/store-standin';
import { DASHBOARD_CLIENT, dashboardMember, dashboardSettings } from '../support/dashboards';
import { OidcProviderStandIn } from '../support/oidc-provider';
import { issueDashboardToken } from '../../apps/core/src/dashboards/tokens';

const ROOT = path.resolve(__dirname, '../..');
const CONFIG = path.join(ROOT, 'test/fuzz/schemathesis.toml');
const TOOLS = process.env.HEARTH_TOOLS_DIR ?? path.join(os.homedir(), '.cache/hearth/tools');
const SCHEMATHESIS = path.join(TOOLS, 'schemathesis/bin/schemathesis');

/** alpha's store settings (the stand-in's address and the key's variable are the run's). */
const STORE = { appId: 480, identity: 'hearth-fuzz', keyVariable: 'HEARTH_FUZZ_STORE_KEY' };

/** The operations that end the signed-in player's credential: fuzzed last, in a run of their own. */
const CREDENTIAL_ENDING = ['deletePlayer', 'signOutPlayer'];

class FuzzError extends Error {}

const fail = (message: string) => new FuzzError(message);
const runHearth = (args: string[], env: NodeJS.ProcessEnv, log: string) => runHearthLogged(args, env, log, fail);

/** What the fuzzed API holds: the tests' standard fixture and one of each economy definition. */
function manifestsYaml(dashboardIssuer: string, storeUrl: string): string {
  const docs = [
    // Generous limits: the fuzzer's requests are checked and counted, never refused for their rate.
    ...standardManifests({ requestsPerMinutePerCredential: 1_000_000, requestsPerMinutePerEnvironment: 1_000_000, requestsPerDayPerEnvironment: 100_000_000 }),
    // alpha's licence key, for the licence routes (their credential is the organisation's, in no environment);
    // it covers one product, so most generated activations are the documented 403 forbidden (body.product).
    licenceKey('alpha-licence', 'alpha', ['plugin']),
    // A custom dashboard's member of alpha-live holding every permission: the run's dashboard token.
    // Its provider is a real OpenID provider the run starts: a fuzzed sign-in is refused by it (401), never a 503.
    // Its store is the stand-in store the run starts: the commerce routes reach their logic and the store.
    project('alpha', {
      dashboard: dashboardSettings(dashboardIssuer),
      store: { provider: 'steam', appId: STORE.appId, sandbox: false, identity: STORE.identity, publisherKey: { env: STORE.keyVariable }, baseUrl: storeUrl },
    } as never),
    dashboardMember('fuzz-member', {
      project: 'alpha',
      subject: 'fuzz',
      environments: [{ environment: 'alpha-live', permissions: ['open_dashboard', 'view_players'] }],
    }),
    // The same definitions in the second environment: its objects are the foreign ids of the run.
    // One of each kind the economy routes act on: a balance and a consumed currency; a one-by-one item,
    // a counted usable purchasable one, and a container.
    ...['alpha-live', 'alpha-test'].flatMap((environment) => [
      currency(`${environment}-gold`, { environment, key: 'gold', name: 'Gold', scope: 'account', kind: 'balance' }),
      currency(`${environment}-energy`, { environment, key: 'energy', name: 'Energy', scope: 'account', kind: 'consumed' }),
      itemType(`${environment}-sword`, { environment, key: 'sword', name: 'Sword', category: 'weapon', ownership: 'one-by-one', usable: true }),
      itemType(`${environment}-potion`, {
        environment,
        key: 'potion',
        name: 'Potion',
        category: 'misc',
        ownership: 'counted',
        usable: true,
        purchasable: true,
        prices: [{ currencyKey: 'gold', amount: 5 }],
      }),
      itemType(`${environment}-chest`, {
        environment,
        key: 'chest',
        name: 'Chest',
        category: 'container',
        ownership: 'one-by-one',
        contents: { grants: [{ itemTypeKey: 'potion', quantity: 2 }] },
      }),
      tour(`${environment}-intro`, { environment, id: 'intro', name: 'Welcome' }),
      // Products: a repeatable one giving gold through the money engine, and a one-time one.
      product(`${environment}-gold-pack`, {
        environment,
        sku: 'gold-pack',
        name: 'Gold pack',
        storeItemId: 1,
        entitlement: 'gold-pack',
        repeatable: true,
        prices: [{ currency: 'USD', amount: 99 }],
        currencies: [{ currencyKey: 'gold', amount: 10 }],
      }),
      product(`${environment}-founder`, {
        environment,
        sku: 'founder',
        name: 'Founder pack',
        storeItemId: 2,
        entitlement: 'founder',
        prices: [{ currency: 'USD', amount: 1999 }],
      }),
      // A skill tree: a root priced in gold and a child of it (node keys are the same in both environments).
      skillTree(`${environment}-combat`, {
        environment,
        key: 'combat',
        name: 'Combat',
        nodes: [
          { key: 'slash', name: 'Slash', prices: [{ currencyKey: 'gold', amount: 5 }] },
          { key: 'cleave', name: 'Cleave', parents: ['slash'] },
        ],
      }),
    ]),
  ];
  return docs.map((d) => YAML.stringify(d)).join('---\n');
}

/**
 * A dashboard token of the run's member in alpha-live, signed as POST /auth/dashboard signs one (the
 * sign-in itself needs a person at an OpenID provider: test/dashboards covers it).
 */
async function dashboardToken(env: NodeJS.ProcessEnv): Promise<string> {
  const config = loadConfig(env, { database: true, masterKey: true });
  const db = createDb(config.databaseUrl, 1);
  const coordination = new MemoryCoordination();
  const tokens = new TokenService(db, config.masterKey, new InvalidationBus(coordination));
  try {
    await tokens.start();
    const member = await db('dashboard_members').where({ manifest_name: 'fuzz-member' }).first('id');
    if (!member) throw new FuzzError('hearth apply made no DashboardMember fuzz-member');
    return await issueDashboardToken(tokens, member.id as string, 'alpha-live');
  } finally {
    tokens.stop();
    await coordination.close();
    await db.destroy();
  }
}

/** The ids one environment's objects have: what the fuzzer draws path parameters from. */
interface SeededIds {
  playerId: string[];
  sessionId: string[];
  itemId: string[];
  inventory: string[];
  grantId: string[];
}

/**
 * Makes objects in one environment through the API (players, a session, a save, an item, a balance,
 * a store account and a completed order with its grant) and answers their ids. Returns the first
 * player's access token too (the run's player credential), and the store order ids (body values).
 */
async function seed(
  origin: string,
  serverKey: string,
  tag: string,
  store: StoreStandIn,
): Promise<{ ids: SeededIds; accessToken: string; storeOrderIds: string[] }> {
  const send = async (method: string, path: string, token: string, body?: unknown, key?: string) => {
    const reply = await fetch(`${origin}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (reply.status >= 300) throw new FuzzError(`seeding ${tag}: ${method} ${path} answered ${reply.status}: ${await reply.text()}`);
    return reply.json() as Promise<any>;
  };
  const ids: SeededIds = { playerId: [], sessionId: [], itemId: [], inventory: [], grantId: [] };
  const storeOrderIds: string[] = [];
  let accessToken = '';
  for (const n of [1, 2]) {
    const signedIn = await send('POST', '/auth/server', serverKey, { subject: `fuzz-${tag}-${n}`, displayName: `Fuzz ${n}` });
    const playerId: string = signedIn.player.id;
    ids.playerId.push(playerId);
    accessToken ||= signedIn.accessToken;
    ids.sessionId.push((await send('POST', '/sessions', signedIn.accessToken, { gameMode: 'duel', map: 'dock' })).id);
    await send('PUT', `/players/${playerId}/data/slot-1`, serverKey, { data: { level: n } });
    await send('POST', `/players/${playerId}/currencies/gold/credit`, serverKey, { amount: 500, reason: 'fuzz_seed' }, `seed-gold-${tag}-${n}`);
    for (const itemTypeKey of ['sword', 'chest']) {
      const grant = await send('POST', `/players/${playerId}/items/grant`, serverKey, { itemTypeKey }, `seed-${itemTypeKey}-${tag}-${n}`);
      ids.itemId.push(grant.items[0].id);
      if (itemTypeKey === 'sword') ids.inventory.push(grant.inventoryId);
    }
    await send('POST', `/players/${playerId}/items/grant`, serverKey, { itemTypeKey: 'potion', quantity: 20 }, `seed-potion-${tag}-${n}`);
    // A store account (the stand-in's ticket for a steam id of this player) and a completed order: an order id and a grant.
    const steamId = (76561197960265728n + BigInt(tag === 'live' ? n : 100 + n)).toString();
    store.setUser(steamId, { country: 'US', currency: 'USD', status: 'Active' });
    await send('POST', '/commerce/store/identify', signedIn.accessToken, {
      ticket: store.issueTicket(steamId, { identity: STORE.identity, appid: STORE.appId }),
      identity: STORE.identity,
    });
    const order = await send('POST', '/commerce/orders', signedIn.accessToken, { sku: 'gold-pack', provider: 'steam', language: 'en' });
    const settled = await send('POST', '/commerce/store/authorizations', signedIn.accessToken, { storeOrderId: order.storeOrderId, authorized: true });
    if (settled.order.status !== 'completed') throw new FuzzError(`seeding ${tag}: the order was not completed: ${JSON.stringify(settled)}`);
    storeOrderIds.push(order.storeOrderId);
    ids.grantId.push(settled.entitlements[0].id);
  }
  return { ids, accessToken, storeOrderIds };
}

/**
 * The config a run uses: the repository's, plus the dictionaries of the ids the run made. Path
 * parameters of those names are drawn from them half the time (the other half, schemathesis makes its
 * own), from both environments: the foreign_ids_stay_foreign check (hooks.py) holds the other's refused.
 */
function runConfig(own: SeededIds, foreign: SeededIds, storeOrderIds: string[]): string {
  // A top-level key goes before the first table; the tables are added after the repository's.
  const lines = [
    `hooks = ${JSON.stringify(path.join(ROOT, 'test/fuzz/hooks.py'))}`,
    fs.readFileSync(CONFIG, 'utf8'),
    '',
    '# Added by test/fuzz/run.ts for this run.',
  ];
  for (const name of Object.keys(own) as (keyof SeededIds)[]) {
    const values = name === 'playerId' ? ['me', ...own[name], ...foreign[name]] : [...own[name], ...foreign[name]];
    lines.push(`[dictionaries.${name}]`, `values = ${JSON.stringify(values)}`);
  }
  lines.push('[dictionaries.currencyKey]', 'values = ["gold", "energy"]', '[dictionaries.itemTypeKey]', 'values = ["sword", "potion", "chest"]');
  lines.push('[dictionaries.tourId]', 'values = ["intro"]');
  lines.push('[dictionaries.identity]', `values = ${JSON.stringify([STORE.identity])}`);
  lines.push('[dictionaries.sku]', 'values = ["gold-pack", "founder"]', '[dictionaries.storeOrderId]', `values = ${JSON.stringify(storeOrderIds)}`);
  lines.push('[dictionaries.treeKey]', 'values = ["combat"]', '[dictionaries.nodeKey]', 'values = ["slash", "cleave"]');
  lines.push('[parameters]');
  for (const name of [...Object.keys(own), 'currencyKey', 'tourId', 'treeKey', 'nodeKey'])
    lines.push(`"path.${name}" = { dictionary = "${name}", probability = 0.5 }`);
  lines.push('"body.itemTypeKey" = { dictionary = "itemTypeKey", probability = 0.5 }');
  lines.push('"body.sku" = { dictionary = "sku", probability = 0.5 }', '"body.storeOrderId" = { dictionary = "storeOrderId", probability = 0.5 }');
  lines.push('"body.identity" = { dictionary = "identity", probability = 0.5 }');
  lines.push('[checks.foreign_ids_stay_foreign]', 'enabled = true');
  return lines.join('\n') + '\n';
}

interface RunResult {
  name: string;
  code: number;
  seconds: number;
  output: string;
}

/** Runs schemathesis to its end, its output both shown and kept (the summary is read from it). */
function runSchemathesis(name: string, config: string, args: string[], env: NodeJS.ProcessEnv): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(SCHEMATHESIS, ['--config-file', config, 'run', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
      process.stdout.write(d);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ name, code: code ?? (signal ? 128 : 1), seconds: (Date.now() - started) / 1000, output }));
  });
}

/** The figures of one run, from schemathesis's summary ("Test cases: N generated, …" and the failures). */
function figures(run: RunResult): { cases: number; failures: Record<string, number> } {
  const plain = run.output.replace(/\x1b\[[0-9;]*m/g, '');
  const cases = Number(/Test cases:\s*\n?\s*([\d,]+) generated/.exec(plain)?.[1]?.replace(/,/g, '') ?? NaN);
  const failures: Record<string, number> = {};
  // The summary's "Failures:" block lists "❌ <title>: <n>" per kind of failure.
  const block = /Failures:\s*\n([\s\S]*?)\n\s*\n/.exec(plain)?.[1] ?? '';
  for (const line of block.split('\n')) {
    const m = /^\s*\S+\s+(.+?):\s*(\d+)\s*$/.exec(line);
    if (m) failures[m[1]] = (failures[m[1]] ?? 0) + Number(m[2]);
  }
  return { cases, failures };
}

async function main(): Promise<number> {
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt >= 0 ? process.argv[onlyAt + 1]?.split(',').filter(Boolean) : undefined;
  if (onlyAt >= 0 && !only?.length) throw new FuzzError('--only takes operation ids, comma-separated (e.g. --only getCommerceCatalog,createCommerceOrder)');
  if (!fs.existsSync(SCHEMATHESIS)) {
    throw new FuzzError(`${SCHEMATHESIS} is missing: run \`make fuzz-tools\` (test/fuzz/install.sh installs it once per machine)`);
  }
  const run = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
  const logs = path.join(os.tmpdir(), 'hearth-fuzz', run);
  fs.mkdirSync(logs, { recursive: true });
  console.log(`fuzz: logs and reports in ${logs}`);

  const scratch = await makeScratchRun('fuzz', fail);
  let api: HearthService | undefined;
  // The custom dashboard's OpenID provider, as crash uploads get a store: POST /auth/dashboard does its work.
  const provider = await OidcProviderStandIn.start([
    { client_id: DASHBOARD_CLIENT.clientId, client_secret: DASHBOARD_CLIENT.clientSecret, redirect_uris: [DASHBOARD_CLIENT.redirectUri] },
  ]);
  // alpha's store: a fuzzed identify is refused by it (invalid-ticket), an order reaches InitTxn.
  const storeKey = `fuzz-${randomBytes(8).toString('hex')}`;
  const store = await new StoreStandIn([storeKey]).start();
  store.autoApprove = true;
  try {
    const base = {
      ...scratch.env,
      LOG_LEVEL: 'warn',
      // Crash uploads and symbol files are kept somewhere, so those routes do their work (without a
      // store they answer 503 by design).
      OBJECT_STORAGE_URL: `file://${path.join(logs, 'objects')}`,
      // hooks.py gives each request an address of its own in X-Forwarded-For, for the per-address limits.
      HEARTH_TRUSTED_PROXIES: 'loopback',
      // The dashboard client's secret, named by alpha's settings (Secret dashboard-oidc, key client-secret).
      [secretVariableOf(NAMESPACE, { name: 'dashboard-oidc', key: 'client-secret' })]: DASHBOARD_CLIENT.clientSecret,
      // The store's publisher key, named by alpha's store settings.
      [STORE.keyVariable]: storeKey,
    };
    const manifests = path.join(logs, 'manifests.yaml');
    fs.writeFileSync(manifests, manifestsYaml(provider.issuer, store.url));
    await runHearth(['migrate', '--json'], hearthEnv(base), path.join(logs, 'migrate.log'));
    const applied = JSON.parse(await runHearth(['apply', '-f', manifests, '--json'], hearthEnv(base), path.join(logs, 'apply.log')));
    const serverKey: string | undefined = applied.results.find((r: any) => r.kind === 'ServerKey' && r.name === 'alpha-live-key')?.serverKey?.key;
    if (!serverKey) throw new FuzzError('hearth apply minted no key for ServerKey alpha-live-key');
    const licence: string | undefined = applied.results.find((r: any) => r.kind === 'LicenceKey' && r.name === 'alpha-licence')?.licenceKey?.key;
    if (!licence) throw new FuzzError('hearth apply minted no key for LicenceKey alpha-licence');

    const port = await freePort();
    api = startHearthService(
      'hearth api',
      ['api'],
      hearthEnv({ ...base, PORT: String(port), METRICS_PORT: String(await freePort()) }),
      path.join(logs, 'api.log'),
    );
    const origin = `http://127.0.0.1:${port}`;
    await waitReady(api, `${origin}/readyz`, fail);

    const otherKey: string | undefined = applied.results.find((r: any) => r.kind === 'ServerKey' && r.name === 'alpha-test-key')?.serverKey?.key;
    if (!otherKey) throw new FuzzError('hearth apply minted no key for ServerKey alpha-test-key');
    const { ids, accessToken, storeOrderIds } = await seed(origin, serverKey, 'live', store);
    // The second environment (same project): its objects must stay out of reach of the first's credentials.
    const { ids: foreign, storeOrderIds: foreignOrders } = await seed(origin, otherKey, 'test', store);
    const config = path.join(logs, 'schemathesis.toml');
    fs.writeFileSync(config, runConfig(ids, foreign, [...storeOrderIds, ...foreignOrders]));

    // The config reads the credentials from these (auth.openapi, per security scheme).
    const env = {
      ...process.env,
      HEARTH_SERVER_KEY: serverKey,
      HEARTH_PLAYER_TOKEN: accessToken,
      HEARTH_LICENCE_KEY: licence,
      HEARTH_DASHBOARD_TOKEN: await dashboardToken(hearthEnv(base)),
      HEARTH_FOREIGN_IDS: [...Object.values(foreign).flat(), ...foreignOrders].join(','),
    };
    // The document is read once, now, and both runs load it from a file: fetched again after the main
    // run, GET /openapi.json (no credential) could meet the per-address limit the fuzzer's requests
    // without a credential have used up, and the second run would load no schema at all.
    const reply = await fetch(`${origin}/v1/openapi.json`);
    if (reply.status !== 200) throw new FuzzError(`GET /v1/openapi.json answered ${reply.status}: ${await reply.text()}`);
    const schema = path.join(logs, 'openapi.json');
    fs.writeFileSync(schema, await reply.text());
    const common = (name: string) => [schema, '--url', `${origin}/v1`, '--report', 'junit', '--report-junit-path', path.join(logs, `${name}.junit.xml`)];
    if (only) {
      // No stateful phase: the links it follows mostly join these operations to others.
      const focused = await runSchemathesis(
        'only',
        config,
        [...common('only'), ...only.flatMap((id) => ['--include-operation-id', id]), '--phases', 'examples,coverage,fuzzing'],
        env,
      );
      const f = figures(focused);
      console.log(
        `\nfuzz --only: ${f.cases} cases in ${focused.seconds.toFixed(0)} s; failures: ${Object.keys(f.failures).length ? JSON.stringify(f.failures) : 'none'}`,
      );
      console.log(
        `fuzz --only: the stand-in store was called ${JSON.stringify(Object.fromEntries([...new Set(store.calls.map((c) => c.method))].map((m) => [m, store.count(m)])))}`,
      );
      return focused.code === 0 ? 0 : 1;
    }
    const results: RunResult[] = [
      await runSchemathesis('main', config, [...common('main'), ...CREDENTIAL_ENDING.flatMap((id) => ['--exclude-operation-id', id])], env),
    ];

    // The cross-environment check must be able to fail: told that the first environment's own players
    // are foreign, a short run of GET /players/{playerId} (which answers them 200) has to fail it. It
    // runs before the credential-ending run, which may delete those players.
    const canary = await runSchemathesis(
      'canary',
      config,
      [...common('canary'), '--include-operation-id', 'getPlayer', '--phases', 'fuzzing', '--max-examples', '40'],
      { ...env, HEARTH_FOREIGN_IDS: ids.playerId.join(',') },
    );
    if (canary.code === 0 || !canary.output.includes('foreign_ids_stay_foreign')) {
      throw new FuzzError(
        `the foreign_ids_stay_foreign check did not fire on the canary run (exit ${canary.code}): hooks.py or the dictionaries are not in effect`,
      );
    }
    console.log('\nfuzz: the canary run failed foreign_ids_stay_foreign, as it must: the cross-environment check is live');

    results.push(
      // No stateful phase: no link runs between these two alone.
      await runSchemathesis(
        'credential-ending',
        config,
        [...common('credential-ending'), ...CREDENTIAL_ENDING.flatMap((id) => ['--include-operation-id', id]), '--phases', 'examples,coverage,fuzzing'],
        env,
      ),
    );
    if (api.child.exitCode !== null) throw new FuzzError(`hearth api exited with ${api.child.exitCode} during the run:\n${logTail(api.log)}`);

    let cases = 0;
    const failures: Record<string, number> = {};
    for (const r of results) {
      const f = figures(r);
      cases += f.cases;
      for (const [kind, n] of Object.entries(f.failures)) failures[kind] = (failures[kind] ?? 0) + n;
    }
    const seconds = results.reduce((s, r) => s + r.seconds, 0);
    console.log(
      `\nfuzz: ${cases} cases in ${seconds.toFixed(0)} s over ${results.length} runs; failures: ${Object.keys(failures).length ? JSON.stringify(failures) : 'none'}`,
    );
    const failed = results.filter((r) => r.code !== 0);
    if (failed.length) {
      console.error(`\nFUZZ FAILED: ${failed.map((r) => `${r.name} exited with ${r.code}`).join(', ')}. Logs: ${logs}`);
      return 1;
    }
    return 0;
  } finally {
    if (api) await stopProcess(api.child, 10_000);
    await provider.stop();
    await store.stop();
    await scratch.drop();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`\nFUZZ FAILED: ${err instanceof FuzzError ? err.message : (err?.stack ?? err)}`);
    process.exit(1);
  },
);
