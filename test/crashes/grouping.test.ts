/**
 * Grouping and recording, on the core functions over a real database: crashes that differ only in
 * addresses, offsets, paths and line numbers share an issue; a different top frame does not. A
 * crash is recorded with its upload finished in one transaction, and never twice.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DiskObjectStore } from '@hearth/core/storage';
import {
  FINGERPRINT_FRAMES,
  crashFingerprint,
  crashIdOf,
  fingerprintFrames,
  getCrash,
  getCrashIssue,
  listCrashIssues,
  markCrashUploadPoison,
  normaliseFrame,
  recordCrash,
  storedFileName,
  type CrashRecordInput,
} from '@hearth/core/crashes';
import { createTestDatabase, type TestDatabase } from '../support/harness';
import { crashTestEnvironments, queueCrashUpload } from '../support/crash-uploads';

const stackA = [
  'UnrealGame.exe!FDebug::AssertFailed() [D:\\build\\++UE5\\Sync\\Engine\\Source\\Runtime\\Core\\Private\\Misc\\AssertionMacros.cpp:417]',
  'ShooterGame.exe!AShooterWeapon::FireWeapon() [D:\\Game\\Source\\ShooterGame\\Private\\Weapons\\ShooterWeapon.cpp:120]',
  'ShooterGame.exe!AShooterWeapon::HandleFiring() [D:\\Game\\Source\\ShooterGame\\Private\\Weapons\\ShooterWeapon.cpp:455]',
  'ShooterGame.exe!AShooterCharacter::Tick() [D:\\Game\\Source\\ShooterGame\\Private\\Player\\ShooterCharacter.cpp:88]',
  'UnrealGame.exe!UWorld::Tick() [D:\\build\\++UE5\\Sync\\Engine\\Source\\Runtime\\Engine\\Private\\LevelTick.cpp:1500]',
  'UnrealGame.exe!FEngineLoop::Tick() [D:\\build\\++UE5\\Sync\\Engine\\Source\\Runtime\\Launch\\Private\\LaunchEngineLoop.cpp:5800]',
  'kernel32',
].join('\n');

/** The same stack from another build on another machine: other addresses, lines, paths, a frame-number prefix. */
const stackAElsewhere = [
  '0x00007ff6a1b2c3d4 UnrealGame.exe!FDebug::AssertFailed() [C:\\agent\\work\\Engine\\Source\\Runtime\\Core\\Private\\Misc\\AssertionMacros.cpp:420]',
  '0x00007ff6a1b20010 ShooterGame.exe!AShooterWeapon::FireWeapon() [C:\\agent\\Game\\Source\\ShooterGame\\Private\\Weapons\\ShooterWeapon.cpp:131]',
  '0x00007ff6a1b20999 ShooterGame.exe!AShooterWeapon::HandleFiring() [C:\\agent\\Game\\Source\\ShooterGame\\Private\\Weapons\\ShooterWeapon.cpp:470]',
  '0x00007ff6a1b2aaaa ShooterGame.exe!AShooterCharacter::Tick() [C:\\agent\\Game\\Source\\ShooterGame\\Private\\Player\\ShooterCharacter.cpp:90]',
  '0x00007ff6a1b2bbbb UnrealGame.exe!UWorld::Tick() [C:\\agent\\Engine\\Source\\Runtime\\Engine\\Private\\LevelTick.cpp:1512]',
  '0x00007ff6a1b2cccc UnrealGame.exe!FEngineLoop::Tick() [C:\\agent\\Engine\\Source\\Runtime\\Launch\\Private\\LaunchEngineLoop.cpp:5850]',
  '0x00007ffa00001234 kernel32 + 1234',
].join('\r\n');

const stackB = stackA.replace('AShooterWeapon::FireWeapon()', 'AShooterWeapon::ReloadWeapon()');

describe('normalisation', () => {
  test('addresses, offsets, paths and line numbers are stripped; the function and module stay', () => {
    expect(normaliseFrame('0x00007ff6a1b20010 ShooterGame.exe!AShooterWeapon::FireWeapon() [C:\\a\\b\\ShooterWeapon.cpp:131]')).toBe(
      'ShooterGame.exe!AShooterWeapon::FireWeapon()',
    );
    expect(normaliseFrame('Unknown() Address = 0x7ff6a1b2c3d4 (filename not found) [in ShooterGame.exe]')).toBe('Unknown()');
    expect(normaliseFrame('ShooterGame 0x00007ff6e8a20000 + 1234567')).toBe('ShooterGame');
    expect(normaliseFrame('12  libsystem_kernel.dylib  0x1a2b3c __pthread_kill + 8')).toBe('libsystem_kernel.dylib __pthread_kill');
    expect(normaliseFrame('at Foo::Bar() /home/build/src/Foo.cpp:12:7')).toBe('at Foo::Bar()');
  });

  test(`the first ${FINGERPRINT_FRAMES} frames after the reporting machinery on top`, () => {
    expect(fingerprintFrames(stackA)).toEqual([
      'ShooterGame.exe!AShooterWeapon::FireWeapon()',
      'ShooterGame.exe!AShooterWeapon::HandleFiring()',
      'ShooterGame.exe!AShooterCharacter::Tick()',
      'UnrealGame.exe!UWorld::Tick()',
      'UnrealGame.exe!FEngineLoop::Tick()',
    ]);
  });

  test('same stack elsewhere: same fingerprint; another top frame: another; frames past N do not matter', () => {
    const a = crashFingerprint({ callstack: stackA, type: 'assert' });
    expect(crashFingerprint({ callstack: stackAElsewhere, type: 'assert' }).fingerprint).toBe(a.fingerprint);
    expect(crashFingerprint({ callstack: stackB, type: 'assert' }).fingerprint).not.toBe(a.fingerprint);
    expect(crashFingerprint({ callstack: `${stackA}\nntdll!RtlUserThreadStart()`, type: 'assert' }).fingerprint).toBe(a.fingerprint);
  });

  test('no stack: the portable one, else the message with numbers blanked, else the type', () => {
    expect(crashFingerprint({ callstack: '', portableCallstack: 'ShooterGame 0x1 + 5\nCore 0x2 + 9', type: 'crash' }).frames).toEqual(['ShooterGame', 'Core']);
    const m1 = crashFingerprint({ callstack: null, errorMessage: 'Out of memory allocating 12345 bytes at 0x7ff0', type: 'crash' });
    const m2 = crashFingerprint({ callstack: null, errorMessage: 'Out of memory allocating 999 bytes at 0x1234', type: 'crash' });
    expect(m1.fingerprint).toBe(m2.fingerprint);
    expect(m1.frames).toEqual(['message: Out of memory allocating # bytes at #']);
    expect(crashFingerprint({ type: 'hang' }).frames).toEqual(['type: hang']);
  });

  test('stored file names are one safe key part', () => {
    expect(storedFileName('C:\\Users\\me\\Saved\\Logs\\My Game.log')).toBe('My_Game.log');
    expect(storedFileName('..')).toBe('file');
    expect(storedFileName('a/b/')).toBe('file');
    expect(storedFileName('UEMinidump.dmp')).toBe('UEMinidump.dmp');
  });
});

describe('recording', () => {
  let database: TestDatabase;
  let envs: Record<string, string>;
  let folder: string;
  let store: DiskObjectStore;

  beforeAll(async () => {
    database = await createTestDatabase();
    envs = await crashTestEnvironments(database.db);
    folder = await mkdtemp(path.join(os.tmpdir(), 'hearth-crash-records-'));
    store = new DiskObjectStore(folder);
    await database.db('players').insert({ id: 'p_known', environment_id: envs['alpha-live'] });
  });
  afterAll(async () => {
    await database.drop();
    await rm(folder, { recursive: true, force: true });
  });

  const input = (uploadId: string, over: Partial<CrashRecordInput> = {}): CrashRecordInput => ({
    uploadId,
    layout: 'ue5',
    crashGuid: `UECC-${uploadId}`,
    type: 'assert',
    errorMessage: 'Assertion failed: Ammo >= 0\nsecond line',
    callstack: stackA,
    portableCallstack: null,
    engineVersion: '5.4.2',
    buildVersion: '1.0.0',
    buildConfiguration: 'Shipping',
    platform: 'WindowsClient',
    gameName: 'ShooterGame',
    executableName: 'ShooterGame',
    userId: null,
    userName: 'someone',
    epicAccountId: null,
    claimedPlayerId: null,
    gameData: {},
    crashedAt: null,
    files: [],
    ...over,
  });

  const upload = (env: string, receivedAt: string) =>
    queueCrashUpload(database.db, store, envs[env], Buffer.from('body'), { receivedAt: new Date(receivedAt), enqueue: false });

  test('crashes group by fingerprint per environment, with counts, first/last seen and versions', async () => {
    const u1 = await upload('alpha-live', '2026-11-20T10:00:00Z');
    const u2 = await upload('alpha-live', '2026-11-21T10:00:00Z');
    const u3 = await upload('alpha-live', '2026-11-19T10:00:00Z');
    const u4 = await upload('alpha-live', '2026-11-22T10:00:00Z');
    const u5 = await upload('alpha-test', '2026-11-22T10:00:00Z');
    const r1 = await recordCrash(database.db, input(u1, { claimedPlayerId: 'p_known' }));
    const r2 = await recordCrash(database.db, input(u2, { callstack: stackAElsewhere, buildVersion: '1.0.1', claimedPlayerId: 'p_nobody' }));
    const r3 = await recordCrash(database.db, input(u3));
    const r4 = await recordCrash(database.db, input(u4, { callstack: stackB, errorMessage: null }));
    const r5 = await recordCrash(database.db, input(u5));
    if (!r1.recorded || !r2.recorded || !r3.recorded || !r4.recorded || !r5.recorded) throw new Error('not recorded');
    expect(r2.issueId).toBe(r1.issueId);
    expect(r3.issueId).toBe(r1.issueId);
    expect(r4.issueId).not.toBe(r1.issueId);
    expect(r5.issueId).not.toBe(r1.issueId); // another environment: its own issue

    const issues = await listCrashIssues(database.db, envs['alpha-live'], { limit: 10 });
    expect(issues.map((i) => [i.title, i.count, i.firstSeen, i.lastSeen])).toEqual([
      ['ShooterGame.exe!AShooterWeapon::ReloadWeapon()', 1, '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00.000Z'],
      ['Assertion failed: Ammo >= 0', 3, '2026-11-19T10:00:00.000Z', '2026-11-21T10:00:00.000Z'],
    ]);
    expect(issues[1].versions).toEqual([
      { version: '1.0.1', count: 1, lastSeen: '2026-11-21T10:00:00.000Z' },
      { version: '1.0.0', count: 2, lastSeen: '2026-11-20T10:00:00.000Z' },
    ]);

    const c1 = await getCrash(database.db, envs['alpha-live'], r1.crashId);
    expect(c1).toMatchObject({ id: crashIdOf(u1), uploadId: u1, playerId: 'p_known', userId: 'login-1|epic-1|os-1', type: 'assert' });
    expect((await getCrash(database.db, envs['alpha-live'], r2.crashId))?.playerId).toBeNull(); // no such player: not linked
    expect(await getCrash(database.db, envs['alpha-test'], r1.crashId)).toBeNull(); // another environment's crash is not shown
    const issue = await getCrashIssue(database.db, envs['alpha-live'], r1.issueId, { limit: 10 });
    expect(issue?.crashes.map((c) => c.uploadId)).toEqual([u2, u1, u3]);
    expect(await database.db('crash_uploads').where({ id: u1 }).first('state', 'crash_id')).toEqual({ state: 'recorded', crash_id: r1.crashId });
  });

  test('an upload is recorded once: a second record or a poison mark afterwards changes nothing', async () => {
    const u = await upload('alpha-live', '2026-11-23T10:00:00Z');
    const first = await recordCrash(database.db, input(u));
    expect(first.recorded).toBe(true);
    const before = await listCrashIssues(database.db, envs['alpha-live'], { limit: 10 });
    expect(await recordCrash(database.db, input(u))).toEqual({ recorded: false, state: 'recorded', crashId: crashIdOf(u) });
    expect(await markCrashUploadPoison(database.db, u, 'bad-xml')).toBe(false);
    expect(await listCrashIssues(database.db, envs['alpha-live'], { limit: 10 })).toEqual(before);
    expect(await database.db('crashes').where({ upload_id: u }).count('* as n').first()).toEqual({ n: '1' });
  });

  test('concurrent records of one upload: exactly one crash', async () => {
    const u = await upload('alpha-live', '2026-11-23T11:00:00Z');
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => recordCrash(database.db, input(u))));
    expect(outcomes.filter((o) => o.recorded)).toHaveLength(1);
    expect(await database.db('crashes').where({ upload_id: u }).count('* as n').first()).toEqual({ n: '1' });
  });

  test('poison: the upload is finished with its reason and no crash; a failed record rolls back whole', async () => {
    const u = await upload('alpha-live', '2026-11-23T12:00:00Z');
    expect(await markCrashUploadPoison(database.db, u, 'trailing-bytes')).toBe(true);
    expect(await database.db('crash_uploads').where({ id: u }).first('state', 'poison_reason')).toEqual({ state: 'poison', poison_reason: 'trailing-bytes' });
    expect(await recordCrash(database.db, input(u))).toMatchObject({ recorded: false, state: 'poison' });

    const v = await upload('alpha-live', '2026-11-23T13:00:00Z');
    const issuesBefore = await listCrashIssues(database.db, envs['alpha-live'], { limit: 10 });
    // A layout the table refuses makes the crash insert fail after the issue was counted: all rolled back.
    await expect(recordCrash(database.db, input(v, { layout: 'zip' as 'ue5' }))).rejects.toThrow();
    expect(await listCrashIssues(database.db, envs['alpha-live'], { limit: 10 })).toEqual(issuesBefore);
    expect(await database.db('crash_uploads').where({ id: v }).first('state')).toEqual({ state: 'queued' });
  });
});
