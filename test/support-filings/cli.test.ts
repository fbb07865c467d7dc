/**
 * `hearth support list` as a real subprocess over the harness's database: staff read what players
 * filed, newest first, as text for people or one JSON document; failures are one line and non-zero.
 */
import { type Harness, startHarness } from '../support/harness';
import { call } from '../support/http';
import { oneLine, runHearth } from '../cli/run-hearth';
import { type TestPlayer, fileReport, fileRequest, newPlayer, supportManifests } from './helpers';

jest.setTimeout(120_000); // every step runs the real command, a process start each

let h: Harness;
let vars: Record<string, string>;
let alice: TestPlayer;
let bob: TestPlayer;
let gone: TestPlayer;
const ids: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness({ manifests: supportManifests() });
  vars = { DATABASE_URL: h.database.url };
  alice = await newPlayer(h);
  bob = await newPlayer(h);
  gone = await newPlayer(h);
  const filed = async (name: string, reply: Promise<{ status: number; body: any }>) => {
    const r = await reply;
    if (r.status !== 201) throw new Error(`${name}: ${r.status}`);
    ids[name] = r.body.id;
    await new Promise((resolve) => setTimeout(resolve, 5)); // distinct creation times, so the order is known
  };
  await filed('help', fileRequest(h, alice, { subject: 'Cannot log in', message: 'Since Tuesday\nthe game says no.', contactEmail: 'alice@example.com' }));
  await filed('cheat', fileReport(h, alice, { playerId: bob.id, reason: 'cheating', details: 'Wall hacks.' }));
  await filed('rude', fileReport(h, bob, { playerId: gone.id, reason: 'rude' }));
  await filed('refund', fileRequest(h, bob, { subject: 'Refund', message: 'Bought the wrong skin.' }));
  // A filing in another environment is not listed with alpha-live's.
  const elsewhere = await newPlayer(h, 'alpha-test-key');
  await filed('elsewhere', fileRequest(h, elsewhere, { subject: 'Elsewhere', message: 'Another environment.' }));
  expect((await call(h.base, 'DELETE', `/players/${gone.id}`, { token: h.serverKeys['alpha-live-key'] })).status).toBe(204);
});
afterAll(async () => {
  await h.close();
});

async function listJson(...args: string[]) {
  const run = await runHearth(['support', 'list', '--environment', 'alpha-live', '--json', ...args], vars);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as { environment: string; filings: Record<string, unknown>[] };
}

test('--json: one document with every filing of the environment, newest first', async () => {
  const listed = await listJson();
  expect(listed.environment).toBe('alpha-live');
  expect(listed.filings.map((f) => f.id)).toEqual([ids.refund, ids.rude, ids.cheat, ids.help]);
  const [refund, rude, cheat, help] = listed.filings;
  expect(help).toEqual({
    id: ids.help,
    kind: 'request',
    playerId: alice.id,
    createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    subject: 'Cannot log in',
    message: 'Since Tuesday\nthe game says no.',
    contactEmail: 'alice@example.com',
  });
  expect(refund).toMatchObject({ kind: 'request', playerId: bob.id, contactEmail: null });
  expect(cheat).toEqual({
    id: ids.cheat,
    kind: 'report',
    playerId: alice.id,
    createdAt: expect.any(String),
    reportedPlayerId: bob.id,
    reason: 'cheating',
    details: 'Wall hacks.',
  });
  // The reported player was deleted since: the report stays, detached.
  expect(rude).toMatchObject({ kind: 'report', playerId: bob.id, reportedPlayerId: null, reason: 'rude', details: null });
});

test('--kind requests|reports lists one kind; --limit caps the count, newest kept', async () => {
  expect((await listJson('--kind', 'requests')).filings.map((f) => f.id)).toEqual([ids.refund, ids.help]);
  expect((await listJson('--kind', 'reports')).filings.map((f) => f.id)).toEqual([ids.rude, ids.cheat]);
  expect((await listJson('--kind', 'reports', '--limit', '1')).filings.map((f) => f.id)).toEqual([ids.rude]);
});

test('without --json: readable text, one block per filing', async () => {
  const run = await runHearth(['support', 'list', '--environment', 'alpha-live'], vars);
  expect(run.code).toBe(0);
  expect(run.stderr).toBe('');
  const blocks = run.stdout.trim().split('\n\n');
  expect(blocks).toHaveLength(4);
  expect(blocks[3]).toMatch(new RegExp(`^\\S+Z  request ${ids.help}  from player ${alice.id}\n`));
  expect(blocks[3]).toContain('  subject: Cannot log in\n  contact: alice@example.com\n  message: Since Tuesday\n    the game says no.');
  expect(blocks[2]).toContain(`report ${ids.cheat}  from player ${alice.id} about player ${bob.id}\n  reason: cheating\n  details: Wall hacks.`);
  expect(blocks[1]).toContain(`report ${ids.rude}  from player ${bob.id} about a deleted player\n  reason: rude`);
  expect(run.stdout).not.toContain(ids.elsewhere);
});

test('an environment with nothing filed says so', async () => {
  const run = await runHearth(['support', 'list', '--environment', 'plain-live', '--kind', 'reports'], vars);
  expect(run.code).toBe(0);
  expect(run.stdout.trim()).toBe('no reports in plain-live');
  const json = await runHearth(['support', 'list', '--environment', 'plain-live', '--json'], vars);
  expect(JSON.parse(json.stdout)).toEqual({ environment: 'plain-live', filings: [] });
});

test.each([
  [['--environment', 'no-such-app'], 'hearth: no environment has app key "no-such-app"'],
  [['--environment', 'alpha-live', '--kind', 'tickets'], 'hearth: --kind must be requests or reports, not "tickets"'],
  [['--environment', 'alpha-live', '--limit', '0'], 'hearth: --limit must be a whole number from 1 to 1000'],
])('%j fails with one clear line and a non-zero exit', async (args, line) => {
  const run = await runHearth(['support', 'list', ...args], vars);
  expect(run.code).not.toBe(0);
  expect(run.stdout).toBe('');
  expect(oneLine(run.stderr)).toBe(line);
});
