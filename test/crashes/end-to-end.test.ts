/**
 * Issue 11 end to end: crash archives sent as Unreal's CrashReportClient sends them (both layouts)
 * go through POST /crash-reports/:appKey, object storage and the queue to a crash worker, and come
 * out as crashes grouped into one issue by their callstack, with their files kept; a malformed one
 * ends as poison without stopping the worker.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@hearth/core';
import { DiskObjectStore } from '@hearth/core/storage';
import { getCrash, listCrashIssues } from '@hearth/core/crashes';
import { type CrashWorker, loadCrashWorkerSettings, startCrashWorker } from '@hearth/crash-worker';
import { type Harness, startHarness } from '../support/harness';
import { call } from '../support/http';
import { eventually } from '../support/wait';
import { compress, crashUploadBody, typicalCrashFiles } from '../support/crash-archive';

let h: Harness;
let folder: string;
let store: DiskObjectStore;
let worker: CrashWorker;

beforeAll(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'hearth-crash-e2e-'));
  store = new DiskObjectStore(folder);
  h = await startHarness({ objectStore: store });
  worker = await startCrashWorker({
    db: h.db,
    databaseUrl: h.database.url,
    objectStore: store,
    logger: createLogger('silent'),
    settings: { ...loadCrashWorkerSettings({}), pollingIntervalSeconds: 0.5 },
  });
});
afterAll(async () => {
  await worker.stop();
  await h.close();
  await rm(folder, { recursive: true, force: true });
});

const upload = (body: Buffer, userId: string) =>
  call(h.base, 'POST', `/crash-reports/alpha-live?AppID=CrashReporter&AppVersion=5.4.1&AppEnvironment=Release&UploadType=crashreports&UserID=${userId}`, {
    rawBody: body,
    headers: { 'Content-Type': 'application/octet-stream' },
  });

/** Waits (bounded) until no upload is queued any more. */
async function drained(): Promise<{ id: string; state: string; poison_reason: string | null; crash_id: string | null }[]> {
  let rows: { id: string; state: string; poison_reason: string | null; crash_id: string | null }[] = [];
  await eventually(
    async () => {
      rows = await h.db('crash_uploads').orderBy('seq').select('id', 'state', 'poison_reason', 'crash_id');
      return rows.length > 0 && rows.every((r) => r.state !== 'queued');
    },
    30_000,
    250,
  ).catch(() => {
    throw new Error('uploads still queued after 30 s');
  });
  return rows;
}

test('UE5 and UE4 archives of one crash become one issue of two crashes; a malformed upload is poison', async () => {
  const stack = (address: string, line: number) =>
    `0x${address} ShooterGame.exe!AWeapon::Fire() [D:\\build\\Weapon.cpp:${line}]\n0x00007ff6a1b2c3d4 ShooterGame.exe!APlayerPawn::Tick() [D:\\build\\Pawn.cpp:88]`;
  const ue5 = crashUploadBody(
    typicalCrashFiles({
      crashGuid: 'UECC-Windows-A_0000',
      errorMessage: 'Access violation',
      callstack: stack('00007ff6a1b20001', 120),
      engineVersion: '5.4.1',
    }),
    'ue5',
  );
  const ue4 = crashUploadBody(
    typicalCrashFiles({
      crashGuid: 'UE4CC-Windows-B_0000',
      errorMessage: 'Access violation',
      callstack: stack('00007ff6a1b29999', 131),
      engineVersion: '4.27.2',
    }),
    'ue4',
  );
  for (const [body, user] of [
    [ue5, 'login-a'],
    [ue4, 'login-b'],
    [compress(Buffer.from('CR1 but nothing after')), 'login-c'],
  ] as const) {
    const reply = await upload(body, user);
    expect([reply.status, reply.body]).toEqual([200, { received: true }]);
  }

  const uploads = await drained();
  expect(uploads.map((u) => [u.state, u.poison_reason])).toEqual([
    ['recorded', null],
    ['recorded', null],
    ['poison', expect.any(String)],
  ]);
  const env = String((await h.db('environments').where({ app_key: 'alpha-live' }).first('id')).id);
  const issues = await listCrashIssues(h.db, env, { limit: 10 });
  expect(issues).toHaveLength(1);
  expect(issues[0]).toMatchObject({ count: 2 });
  expect(issues[0].versions.map((v) => v.version).sort()).toEqual(['4.27.2', '5.4.1']);

  const crashes = await Promise.all(uploads.slice(0, 2).map((u) => getCrash(h.db, env, u.crash_id!)));
  expect(crashes.map((c) => [c!.crashGuid, c!.layout, c!.errorMessage, c!.issueId])).toEqual([
    ['UECC-Windows-A_0000', expect.any(String), 'Access violation', issues[0].id],
    ['UE4CC-Windows-B_0000', expect.any(String), 'Access violation', issues[0].id],
  ]);
  expect(crashes[0]!.layout).not.toBe(crashes[1]!.layout);
  // The minidump and the log are kept in storage under the crash.
  for (const crash of crashes) {
    expect(crash!.files.length).toBeGreaterThanOrEqual(2);
    for (const file of crash!.files) expect(await store.head(file.key)).not.toBeNull();
  }
});
