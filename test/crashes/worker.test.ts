/**
 * The crash worker as real processes (`hearth crash-worker`) over a real database, pg-boss queue and
 * a folder of objects: queued uploads in both layouts become grouped crashes with their files
 * stored; malformed ones end as poison with their reason and do not stop the worker; a worker
 * killed with SIGKILL mid-job leaves its job to another, and the upload is recorded exactly once.
 * Then `hearth crashes list|show` reads what was recorded.
 */
import { type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import zlib from 'node:zlib';
import { CRASH_QUEUE_SCHEMA, CRASH_UPLOAD_QUEUE, crashIdOf } from '@hearth/core/crashes';
import { DiskObjectStore } from '@hearth/core/storage';
import { createTestDatabase, type TestDatabase } from '../support/harness';
import { crashTestEnvironments, queueCrashUpload } from '../support/crash-uploads';
import { archiveBytes, compress, contextXml, crashUploadBody, i32, typicalCrashFiles, ueString } from '../support/crash-archive';
import { eventually, sleep } from '../support/wait';
import { freePort, oneLine, runHearth, spawnHearth } from '../cli/run-hearth';

jest.setTimeout(180_000);

let database: TestDatabase;
let envs: Record<string, string>;
let folder: string;
let store: DiskObjectStore;
const started: ChildProcess[] = [];

const stack = (top: string) =>
  [
    `ShooterGame.exe!${top}() [D:\\Game\\Source\\Weapons.cpp:120]`,
    'ShooterGame.exe!AShooterCharacter::Tick() [D:\\Game\\Source\\Character.cpp:88]',
    'UnrealGame.exe!UWorld::Tick() [D:\\Engine\\LevelTick.cpp:1500]',
  ].join('\n');

const fields = (over: Record<string, unknown> = {}) => ({
  crashGuid: 'UECC-Windows-0123_0000',
  errorMessage: 'Unhandled Exception: EXCEPTION_ACCESS_VIOLATION reading address 0x00000010',
  callstack: stack('AShooterWeapon::FireWeapon'),
  engineVersion: '5.4.2-33871570+++UE5+Release-5.4',
  buildVersion: '1.2.0',
  platformName: 'WindowsClient',
  gameName: 'UE-ShooterGame',
  loginId: 'login-7',
  timeOfCrash: new Date('2026-11-20T18:04:05.000Z'),
  gameData: { HearthPlayerId: 'p_crasher' },
  ...over,
});

async function startWorker(vars: Record<string, string> = {}): Promise<{ child: ChildProcess; metricsPort: number; output: () => string }> {
  const metricsPort = await freePort();
  const child = spawnHearth(['crash-worker'], {
    DATABASE_URL: database.url,
    OBJECT_STORAGE_URL: pathToFileURL(folder).href,
    METRICS_PORT: String(metricsPort),
    CRASH_WORKER_POLL_SECONDS: '0.5',
    CRASH_QUEUE_MAINTENANCE_SECONDS: '1',
    CRASH_MAX_INFLATED_BYTES: String(8 * 1024 * 1024),
    ...vars,
  });
  started.push(child);
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`the worker exited: ${output}`);
      return fetch(`http://127.0.0.1:${metricsPort}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    },
    30_000,
    100,
  );
  return { child, metricsPort, output: () => output };
}

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });

const uploadState = async (id: string) => (await database.db('crash_uploads').where({ id }).first('state', 'poison_reason', 'crash_id'))!;
const allFinished = (ids: string[]) => async () =>
  (await database.db('crash_uploads').whereIn('id', ids).where({ state: 'queued' }).count('* as n').first())!.n === '0';
const metricsText = (port: number) => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
const metric = (text: string, line: string) => {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
};

beforeAll(async () => {
  database = await createTestDatabase();
  envs = await crashTestEnvironments(database.db);
  folder = await mkdtemp(path.join(os.tmpdir(), 'hearth-crash-worker-'));
  store = new DiskObjectStore(folder);
  await database.db('players').insert({ id: 'p_crasher', environment_id: envs['alpha-live'] });
});
// A test that failed midway leaves no worker behind to take the next test's jobs.
afterEach(async () => {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited(child);
    }
});
afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await database.drop();
  await rm(folder, { recursive: true, force: true });
});

const live = () => envs['alpha-live'];
let goodUe5: string;
let goodUe4: string;
let goodAfter: string;

test('queued uploads of both layouts become grouped crashes; malformed ones are poison with their reason; the worker goes on', async () => {
  const worker = await startWorker();
  const q = (body: Buffer, opts = {}) => queueCrashUpload(database.db, store, live(), body, opts);

  goodUe5 = await q(crashUploadBody(typicalCrashFiles(fields()), 'ue5'));
  goodUe4 = await q(
    crashUploadBody(typicalCrashFiles(fields({ buildVersion: '1.3.0', callstack: stack('AShooterWeapon::FireWeapon').replace(/:\d+\]/g, ':999]') })), 'ue4'),
  );
  const whole = archiveBytes(typicalCrashFiles(fields()));
  const poison: Record<string, string> = {
    // Cut inside UncompressedSize, a fixed-size field (a cut inside a string or a file is a length past the end).
    truncated: await q(compress(whole.subarray(0, 3 + 264 + 264 + 2))),
    'length-out-of-bounds': await q(
      compress(
        Buffer.concat([Buffer.from('CR1'), ueString('d'), ueString('d.uecrash'), i32(0), i32(1), i32(0), ueString('x.log'), i32(0x7fffffff), Buffer.alloc(64)]),
      ),
    ),
    'too-many-files': await q(compress(Buffer.concat([Buffer.from('CR1'), ueString('d'), ueString('d.uecrash'), i32(0), i32(100_000), Buffer.alloc(64)]))),
    'trailing-bytes': await q(compress(Buffer.concat([whole, Buffer.from('junk')]))),
    'inflate-failed': await q(Buffer.from('not a zlib stream at all')),
    'inflated-too-large': await q(zlib.deflateSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 })),
    'no-context': await q(crashUploadBody([{ name: 'Game.log', data: 'only a log' }])),
    'bad-xml': await q(crashUploadBody([{ name: 'CrashContext.runtime-xml', data: '<FGenericCrashContext><RuntimeProperties>' }])),
  };
  // A row whose body never reached storage (the ingest writes the body first; this cannot be retried into existence).
  const missing = await q(Buffer.from('x'));
  await store.delete(`crash-uploads/${live()}/${missing}.zlib`);
  poison['body-missing'] = missing;
  goodAfter = await q(
    crashUploadBody(
      typicalCrashFiles(fields({ callstack: stack('AShooterWeapon::ReloadWeapon'), errorMessage: 'Assertion failed: Clip > 0', crashType: 'Assert' })),
      'ue5',
    ),
  );

  const all = [goodUe5, goodUe4, ...Object.values(poison), goodAfter];
  await eventually(allFinished(all), 60_000, 100);
  // pg-boss marks a job completed once its handler has returned, a moment after the upload's state
  // committed: wait for that too before counting the jobs (seen once as 'active' on a loaded machine).
  const jobStates = async () =>
    (await database.db.raw(`SELECT state, count(*)::int AS n FROM ${CRASH_QUEUE_SCHEMA}.job WHERE name = ? GROUP BY state`, [CRASH_UPLOAD_QUEUE])).rows;
  await eventually(async () => (await jobStates()).every((row: { state: string }) => row.state !== 'active'), 10_000, 50);

  for (const [reason, id] of Object.entries(poison))
    expect([reason, await uploadState(id)]).toEqual([reason, { state: 'poison', poison_reason: reason, crash_id: null }]);
  for (const id of [goodUe5, goodUe4, goodAfter]) expect(await uploadState(id)).toEqual({ state: 'recorded', poison_reason: null, crash_id: crashIdOf(id) });

  // Grouped: the two FireWeapon crashes (lines differ) share an issue; ReloadWeapon is another.
  const issues = await database.db('crash_issues').where({ environment_id: live() }).orderBy('id');
  expect(issues.map((i) => [i.title, Number(i.crash_count)])).toEqual([
    ['Unhandled Exception: EXCEPTION_ACCESS_VIOLATION reading address 0x00000010', 2],
    ['Assertion failed: Clip > 0', 1],
  ]);
  const crash = await database.db('crashes').where({ upload_id: goodUe4 }).first();
  expect(crash).toMatchObject({
    layout: 'ue4',
    type: 'crash',
    build_version: '1.3.0',
    platform: 'WindowsClient',
    game_name: 'UE-ShooterGame',
    user_id: 'login-7',
    player_id: 'p_crasher',
    crash_guid: 'UECC-Windows-0123_0000',
  });
  expect(crash.crashed_at.toISOString()).toBe('2026-11-20T18:04:05.000Z');
  expect((await database.db('crashes').where({ upload_id: goodAfter }).first()).type).toBe('assert');

  // The files are in storage under the crash's folder, byte for byte.
  const crashFolder = path.join(folder, 'crashes', live(), crashIdOf(goodUe5));
  expect((await readdir(crashFolder)).sort()).toEqual(['CrashContext.runtime-xml', 'ShooterGame.log', 'UEMinidump.dmp']);
  const files = (await database.db('crashes').where({ upload_id: goodUe5 }).first()).files;
  expect(files.map((f: { key: string; kind: string }) => [f.key, f.kind])).toEqual([
    [`crashes/${live()}/${crashIdOf(goodUe5)}/CrashContext.runtime-xml`, 'context'],
    [`crashes/${live()}/${crashIdOf(goodUe5)}/UEMinidump.dmp`, 'minidump'],
    [`crashes/${live()}/${crashIdOf(goodUe5)}/ShooterGame.log`, 'log'],
  ]);

  // Every job completed, none left to retry: poison is never retried.
  expect(await jobStates()).toEqual([{ state: 'completed', n: all.length }]);

  const text = await metricsText(worker.metricsPort);
  expect(metric(text, 'hearth_crash_jobs_total{outcome="recorded"}')).toBe(3);
  expect(metric(text, 'hearth_crash_jobs_total{outcome="poison"}')).toBe(Object.keys(poison).length);
  for (const reason of Object.keys(poison)) expect([reason, metric(text, `hearth_crash_poison_total{reason="${reason}"}`)]).toEqual([reason, 1]);
  expect(metric(text, 'hearth_crash_parse_duration_seconds_count')).toBe(3 + Object.keys(poison).length - 1); // body-missing never reached the parser
  expect(metric(text, 'hearth_crash_queue_depth{state="waiting"}')).toBe(0);
  expect(metric(text, 'hearth_crash_queue_oldest_age_seconds')).toBe(0);

  // SIGTERM: stops taking jobs, finishes, exits 0.
  worker.child.kill('SIGTERM');
  expect(await exited(worker.child)).toEqual({ code: 0, signal: null });
});

test('queue depth and the oldest job age are sampled from the queue', async () => {
  const waiting = await queueCrashUpload(database.db, store, live(), crashUploadBody(typicalCrashFiles(fields())), {});
  await sleep(1100); // wall time: the worker samples the oldest job's age in whole seconds of the database's clock
  const worker = await startWorker({ CRASH_WORKER_POLL_SECONDS: '60' });
  // The first poll happens at start; the one waiting job may already be taken. Queue one more, seen before the next poll.
  await eventually(async () => (await uploadState(waiting)).state !== 'queued', 30_000, 100);
  const later = await queueCrashUpload(database.db, store, live(), crashUploadBody(typicalCrashFiles(fields())), {});
  await sleep(1100); // wall time, as above: a second for the age to reach 1
  const text = await metricsText(worker.metricsPort);
  expect(metric(text, 'hearth_crash_queue_depth{state="waiting"}')).toBe(1);
  expect(metric(text, 'hearth_crash_queue_oldest_age_seconds')).toBeGreaterThanOrEqual(1);
  worker.child.kill('SIGTERM');
  expect(await exited(worker.child)).toEqual({ code: 0, signal: null });
  // Left for the next test's workers to finish.
  expect((await uploadState(later)).state).toBe('queued');
});

test('a worker killed with SIGKILL mid-job: another completes the job; recorded once, files not duplicated', async () => {
  // Jobs of this test database expire 2 s after a worker took them (the queue's own is minutes).
  await database.db.raw(`UPDATE ${CRASH_QUEUE_SCHEMA}.queue SET expire_seconds = 2, retry_delay = 1 WHERE name = ?`, [CRASH_UPLOAD_QUEUE]);
  await database.db.raw(`UPDATE ${CRASH_QUEUE_SCHEMA}.job SET expire_in = interval '2 seconds', retry_delay = 1 WHERE name = ? AND state = 'created'`, [
    CRASH_UPLOAD_QUEUE,
  ]);
  const uploadId = await queueCrashUpload(database.db, store, live(), crashUploadBody(typicalCrashFiles(fields())), {});
  const crashId = crashIdOf(uploadId);
  const crashFolder = path.join(folder, 'crashes', live(), crashId);

  // A holds every job for a minute after storing its files, before recording. Stored means the three
  // files in place: while one is still being written the folder also holds its `.partial-` file, and a
  // kill then would leave that behind.
  const stored = ['CrashContext.runtime-xml', 'ShooterGame.log', 'UEMinidump.dmp'];
  const a = await startWorker({ HEARTH_CRASH_WORKER_TEST_HOLD_MS: '60000', CRASH_WORKER_CONCURRENCY: '4' });
  await eventually(async () => (await readdir(crashFolder).catch(() => [])).sort().join() === stored.join(), 30_000, 100);
  const held = await database.db.raw(`SELECT state FROM ${CRASH_QUEUE_SCHEMA}.job WHERE data->>'uploadId' = ?`, [uploadId]);
  expect(held.rows).toEqual([{ state: 'active' }]);
  a.child.kill('SIGKILL');
  expect((await exited(a.child)).signal).toBe('SIGKILL');
  expect((await uploadState(uploadId)).state).toBe('queued');

  const b = await startWorker();
  await eventually(async () => (await uploadState(uploadId)).state === 'recorded', 60_000, 100);
  expect(await uploadState(uploadId)).toEqual({ state: 'recorded', poison_reason: null, crash_id: crashId });
  expect(await database.db('crashes').where({ upload_id: uploadId }).count('* as n').first()).toEqual({ n: '1' });
  expect((await readdir(crashFolder)).sort()).toEqual(stored);
  // The queue marks the job completed just after the handler's commit: wait for that step too.
  const jobOf = async () => (await database.db.raw(`SELECT state, retry_count FROM ${CRASH_QUEUE_SCHEMA}.job WHERE data->>'uploadId' = ?`, [uploadId])).rows;
  await eventually(async () => (await jobOf())[0]?.state === 'completed', 30_000, 100);
  expect(await jobOf()).toEqual([{ state: 'completed', retry_count: 1 }]);

  // Nothing lost: every upload of this file ended recorded or poison.
  await eventually(async () => (await database.db('crash_uploads').where({ state: 'queued' }).count('* as n').first())!.n === '0', 60_000, 100);
  // Nothing recorded twice: one crash per recorded upload.
  const counts = await database.db.raw(
    `SELECT (SELECT count(*)::int FROM crash_uploads WHERE state = 'recorded') AS recorded, (SELECT count(*)::int FROM crashes) AS crashes`,
  );
  expect(counts.rows[0].recorded).toBe(counts.rows[0].crashes);
  b.child.kill('SIGTERM');
  expect(await exited(b.child)).toEqual({ code: 0, signal: null });
});

test('a job whose last attempt is killed: its upload is finished as poison retries-exhausted, not left queued', async () => {
  await database.db.raw(`UPDATE ${CRASH_QUEUE_SCHEMA}.queue SET expire_seconds = 2, retry_limit = 0 WHERE name = ?`, [CRASH_UPLOAD_QUEUE]);
  const uploadId = await queueCrashUpload(database.db, store, live(), crashUploadBody(typicalCrashFiles(fields())), {});
  const a = await startWorker({ HEARTH_CRASH_WORKER_TEST_HOLD_MS: '60000' });
  await eventually(async () => (await readdir(path.join(folder, 'crashes', live(), crashIdOf(uploadId))).catch(() => [])).length === 3, 30_000, 100);
  a.child.kill('SIGKILL');
  await exited(a.child);

  const b = await startWorker();
  await eventually(async () => (await uploadState(uploadId)).state !== 'queued', 30_000, 100);
  expect(await uploadState(uploadId)).toEqual({ state: 'poison', poison_reason: 'retries-exhausted', crash_id: null });
  expect((await database.db.raw(`SELECT state FROM ${CRASH_QUEUE_SCHEMA}.job WHERE data->>'uploadId' = ?`, [uploadId])).rows).toEqual([{ state: 'failed' }]);
  expect(metric(await metricsText(b.metricsPort), 'hearth_crash_poison_total{reason="retries-exhausted"}')).toBe(1);
  expect(await database.db('crashes').where({ upload_id: uploadId }).count('* as n').first()).toEqual({ n: '0' });
  b.child.kill('SIGTERM');
  expect(await exited(b.child)).toEqual({ code: 0, signal: null });
});

describe('hearth crashes', () => {
  const vars = () => ({ DATABASE_URL: database.url });

  test('list: issues with counts, first and last seen, versions; uploads by state', async () => {
    const run = await runHearth(['crashes', 'list', '--environment', 'alpha-live', '--json'], vars());
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.environment).toBe('alpha-live');
    const [reload, access] = [...out.issues].sort((x: { count: number }, y: { count: number }) => x.count - y.count);
    expect(reload).toMatchObject({ title: 'Assertion failed: Clip > 0', count: 1, versions: [{ version: '1.2.0', count: 1 }] });
    expect(access.count).toBe(5); // the two of the first test, the two of the depth test, the one of the kill test
    expect(access.versions.map((v: { version: string; count: number }) => [v.version, v.count]).sort()).toEqual([
      ['1.2.0', 4],
      ['1.3.0', 1],
    ]);
    expect(access.frames[0]).toBe('ShooterGame.exe!AShooterWeapon::FireWeapon()');
    expect(out.uploads).toMatchObject({ queued: 0, recorded: 6, poison: { truncated: 1, 'bad-xml': 1, 'body-missing': 1, 'retries-exhausted': 1 } });

    const text = await runHearth(['crashes', 'list', '--environment', 'alpha-live'], vars());
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/ISSUE +CRASHES +FIRST SEEN +LAST SEEN +VERSIONS +TITLE\n/);
    expect(text.stdout).toMatch(/#\d+ +5 +\S+ +\S+ +.+ {2}Unhandled Exception/);
    expect(text.stdout).toMatch(/uploads: 6 recorded, 0 queued, poison: .*trailing-bytes 1/);
  });

  test('show: one crash with its fields and file keys; --issue: one issue with its crashes', async () => {
    const crashId = crashIdOf(goodUe5);
    const run = await runHearth(['crashes', 'show', crashId, '--environment', 'alpha-live', '--json'], vars());
    expect(run.code).toBe(0);
    const { crash } = JSON.parse(run.stdout);
    expect(crash).toMatchObject({
      id: crashId,
      uploadId: goodUe5,
      layout: 'ue5',
      type: 'crash',
      playerId: 'p_crasher',
      buildVersion: '1.2.0',
      crashedAt: '2026-11-20T18:04:05.000Z',
    });
    expect(crash.files.map((f: { key: string }) => f.key)).toContain(`crashes/${live()}/${crashId}/UEMinidump.dmp`);

    const text = await runHearth(['crashes', 'show', crashId, '--environment', 'alpha-live'], vars());
    expect(text.stdout).toContain(`crashes/${live()}/${crashId}/UEMinidump.dmp  minidump  512 bytes`);
    expect(text.stdout).toMatch(/player\s+p_crasher/);

    const issue = await runHearth(['crashes', 'show', crash.issueId, '--issue', '--environment', 'alpha-live', '--json'], vars());
    expect(issue.code).toBe(0);
    const shown = JSON.parse(issue.stdout).issue;
    expect(shown.count).toBe(5);
    expect(shown.crashes.map((c: { id: string }) => c.id)).toContain(crashId);
  });

  test('refusals: one line, non-zero exit', async () => {
    const unknownEnv = await runHearth(['crashes', 'list', '--environment', 'nope'], vars());
    expect(unknownEnv.code).toBe(1);
    expect(oneLine(unknownEnv.stderr)).toBe('hearth: no environment has app key "nope"');
    const unknownCrash = await runHearth(['crashes', 'show', 'nosuchcrash', '--environment', 'alpha-live'], vars());
    expect(oneLine(unknownCrash.stderr)).toBe('hearth: no crash nosuchcrash in alpha-live');
    // Another environment's crash is not shown.
    const elsewhere = await runHearth(['crashes', 'show', crashIdOf(goodUe5), '--environment', 'alpha-test'], vars());
    expect(oneLine(elsewhere.stderr)).toBe(`hearth: no crash ${crashIdOf(goodUe5)} in alpha-test`);
    const badLimit = await runHearth(['crashes', 'list', '--environment', 'alpha-live', '--limit', '0'], vars());
    expect(oneLine(badLimit.stderr)).toBe('hearth: --limit must be a whole number from 1 to 200');
    const noStore = await runHearth(['crash-worker'], { DATABASE_URL: database.url });
    expect(oneLine(noStore.stderr)).toMatch(/^hearth: OBJECT_STORAGE_URL: is required/);
    const badConcurrency = await runHearth(['crash-worker'], {
      DATABASE_URL: database.url,
      OBJECT_STORAGE_URL: pathToFileURL(folder).href,
      CRASH_WORKER_CONCURRENCY: '0',
    });
    expect(oneLine(badConcurrency.stderr)).toBe('hearth: CRASH_WORKER_CONCURRENCY: must be a whole number 1-64, got "0"');
  });
});
