/**
 * `make fuzz` (`node --import tsx test/fuzz/run.ts`): schemathesis against a real `hearth api`, from
 * the API's own GET /v1/openapi.json; exits non-zero on any failed check (docs/reliability.md).
 *
 * 1. schemathesis from the tools folder (test/fuzz/install.sh installs the pinned version once per
 *    machine: `make fuzz-tools`).
 * 2. A fresh PostgreSQL database, migrated by `hearth migrate`, and the tests' standard manifests
 *    (test/support/manifests.ts: two projects' environments, their server keys, plus a currency and an
 *    item type so the economy routes have something to find) applied by `hearth apply -f`; object
 *    storage in a folder of the run (file://), so the crash and symbol routes work.
 * 3. `hearth api` on a free 127.0.0.1 port; a player signed in with the server key of `alpha-live`.
 * 4. schemathesis runs with test/fuzz/schemathesis.toml, both credentials given per security scheme
 *    (serverKey, playerToken: each operation gets the one it declares). Two runs: every operation but
 *    the two that end the player's credential (DELETE /players/me, POST /players/me/signout), then those
 *    two, so the player token stays good while the rest is fuzzed.
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
import { HearthService, hearthEnv, logTail, makeScratchRun, runHearthLogged, startHearthService, waitReady } from '../support/hearth-process';
import { stopProcess } from '../support/processes';
import { currency, itemType, standardManifests } from '../support/manifests';

const ROOT = path.resolve(__dirname, '../..');
const CONFIG = path.join(ROOT, 'test/fuzz/schemathesis.toml');
const TOOLS = process.env.HEARTH_TOOLS_DIR ?? path.join(os.homedir(), '.cache/hearth/tools');
const SCHEMATHESIS = path.join(TOOLS, 'schemathesis/bin/schemathesis');

/** The operations that end the signed-in player's credential: fuzzed last, in a run of their own. */
const CREDENTIAL_ENDING = ['deletePlayer', 'signOutPlayer'];

class FuzzError extends Error {}

const fail = (message: string) => new FuzzError(message);
const runHearth = (args: string[], env: NodeJS.ProcessEnv, log: string) => runHearthLogged(args, env, log, fail);

/** What the fuzzed API holds: the tests' standard fixture and one of each economy definition. */
function manifestsYaml(): string {
  const docs = [
    // Generous limits: the fuzzer's requests are checked and counted, never refused for their rate.
    ...standardManifests({ requestsPerMinutePerCredential: 1_000_000, requestsPerMinutePerEnvironment: 1_000_000, requestsPerDayPerEnvironment: 100_000_000 }),
    currency('alpha-live-gold', { environment: 'alpha-live', key: 'gold', name: 'Gold', scope: 'account', kind: 'balance' }),
    itemType('alpha-live-sword', { environment: 'alpha-live', key: 'sword', name: 'Sword', category: 'weapon', ownership: 'one-by-one' }),
  ];
  return docs.map((d) => YAML.stringify(d)).join('---\n');
}

interface RunResult {
  name: string;
  code: number;
  seconds: number;
  output: string;
}

/** Runs schemathesis to its end, its output both shown and kept (the summary is read from it). */
function runSchemathesis(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(SCHEMATHESIS, ['--config-file', CONFIG, 'run', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
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
  if (!fs.existsSync(SCHEMATHESIS)) {
    throw new FuzzError(`${SCHEMATHESIS} is missing: run \`make fuzz-tools\` (test/fuzz/install.sh installs it once per machine)`);
  }
  const run = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
  const logs = path.join(os.tmpdir(), 'hearth-fuzz', run);
  fs.mkdirSync(logs, { recursive: true });
  console.log(`fuzz: logs and reports in ${logs}`);

  const scratch = await makeScratchRun('fuzz', fail);
  let api: HearthService | undefined;
  try {
    const base = {
      ...scratch.env,
      LOG_LEVEL: 'warn',
      // Crash uploads and symbol files are kept somewhere, so those routes do their work (without a
      // store they answer 503 by design).
      OBJECT_STORAGE_URL: `file://${path.join(logs, 'objects')}`,
    };
    const manifests = path.join(logs, 'manifests.yaml');
    fs.writeFileSync(manifests, manifestsYaml());
    await runHearth(['migrate', '--json'], hearthEnv(base), path.join(logs, 'migrate.log'));
    const applied = JSON.parse(await runHearth(['apply', '-f', manifests, '--json'], hearthEnv(base), path.join(logs, 'apply.log')));
    const serverKey: string | undefined = applied.results.find((r: any) => r.kind === 'ServerKey' && r.name === 'alpha-live-key')?.serverKey?.key;
    if (!serverKey) throw new FuzzError('hearth apply minted no key for ServerKey alpha-live-key');

    const port = await freePort();
    api = startHearthService('hearth api', ['api'], hearthEnv({ ...base, PORT: String(port), METRICS_PORT: String(await freePort()) }), path.join(logs, 'api.log'));
    const origin = `http://127.0.0.1:${port}`;
    await waitReady(api, `${origin}/readyz`, fail);

    const signIn = await fetch(`${origin}/v1/auth/server`, {
      method: 'POST',
      headers: { authorization: `Bearer ${serverKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subject: 'fuzz-player', displayName: 'Fuzz' }),
    });
    if (signIn.status !== 200 && signIn.status !== 201) throw new FuzzError(`sign-in failed: ${signIn.status} ${await signIn.text()}`);
    const { accessToken } = (await signIn.json()) as { accessToken: string };

    // The config reads both credentials from these (auth.openapi, per security scheme).
    const env = { ...process.env, HEARTH_SERVER_KEY: serverKey, HEARTH_PLAYER_TOKEN: accessToken };
    // The document is read once, now, and both runs load it from a file: fetched again after the main
    // run, GET /openapi.json (no credential) could meet the per-address limit the fuzzer's requests
    // without a credential have used up, and the second run would load no schema at all.
    const reply = await fetch(`${origin}/v1/openapi.json`);
    if (reply.status !== 200) throw new FuzzError(`GET /v1/openapi.json answered ${reply.status}: ${await reply.text()}`);
    const schema = path.join(logs, 'openapi.json');
    fs.writeFileSync(schema, await reply.text());
    const common = (name: string) => [schema, '--url', `${origin}/v1`, '--report', 'junit', '--report-junit-path', path.join(logs, `${name}.junit.xml`)];
    const results = [
      await runSchemathesis('main', [...common('main'), ...CREDENTIAL_ENDING.flatMap((id) => ['--exclude-operation-id', id])], env),
      await runSchemathesis('credential-ending', [...common('credential-ending'), ...CREDENTIAL_ENDING.flatMap((id) => ['--include-operation-id', id])], env),
    ];
    if (api.child.exitCode !== null) throw new FuzzError(`hearth api exited with ${api.child.exitCode} during the run:\n${logTail(api.log)}`);

    let cases = 0;
    const failures: Record<string, number> = {};
    for (const r of results) {
      const f = figures(r);
      cases += f.cases;
      for (const [kind, n] of Object.entries(f.failures)) failures[kind] = (failures[kind] ?? 0) + n;
    }
    const seconds = results.reduce((s, r) => s + r.seconds, 0);
    console.log(`\nfuzz: ${cases} cases in ${seconds.toFixed(0)} s over ${results.length} runs; failures: ${Object.keys(failures).length ? JSON.stringify(failures) : 'none'}`);
    const failed = results.filter((r) => r.code !== 0);
    if (failed.length) {
      console.error(`\nFUZZ FAILED: ${failed.map((r) => `${r.name} exited with ${r.code}`).join(', ')}. Logs: ${logs}`);
      return 1;
    }
    return 0;
  } finally {
    if (api) await stopProcess(api.child, 10_000);
    await scratch.drop();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`\nFUZZ FAILED: ${err instanceof FuzzError ? err.message : err?.stack ?? err}`);
    process.exit(1);
  },
);
