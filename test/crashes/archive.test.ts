/**
 * The crash archive parser on archives built by the test encoder: both layouts read the same; every
 * malformed shape is poison with its reason, refused before anything is allocated from a lying length.
 */
import zlib from 'node:zlib';
import {
  CrashPoison,
  MAX_FILES,
  classifyFile,
  decodeXmlText,
  parseCrashArchive,
  parseCrashUpload,
  readCrashContext,
  ticksToDate,
  type PoisonReason,
} from '@hearth/crash-worker';
import {
  archiveBytes,
  compress,
  contextXml,
  crashUploadBody,
  dotNetTicks,
  entries,
  fakeMinidump,
  i32,
  typicalCrashFiles,
  ueString,
} from '../support/crash-archive';

const crashedAt = new Date('2026-11-20T18:04:05.123Z');
const fields = {
  crashGuid: 'UECC-Windows-0123456789ABCDEF_0000',
  crashType: 'Crash',
  errorMessage: 'Unhandled Exception: EXCEPTION_ACCESS_VIOLATION reading address 0x00000000',
  callstack:
    'ShooterGame!AShooterWeapon::Fire() [D:\\Build\\Source\\ShooterWeapon.cpp:120]\nShooterGame!AShooterCharacter::Tick() [D:\\Build\\Source\\ShooterCharacter.cpp:88]',
  portableCallstack: 'ShooterGame 0x00007ff6e8a20000 + 1234567',
  engineVersion: '5.4.2-33871570+++UE5+Release-5.4',
  buildVersion: '++UE5+Release-5.4-CL-33871570',
  buildConfiguration: 'Shipping',
  platformName: 'WindowsClient',
  gameName: 'UE-ShooterGame',
  executableName: 'ShooterGame',
  userName: 'player1',
  loginId: 'login-abc',
  epicAccountId: 'epic-123',
  timeOfCrash: crashedAt,
  gameData: { HearthPlayerId: 'p_ABCDEF', Map: 'Highrise' },
};

async function poisonOf(work: Promise<unknown> | (() => unknown)): Promise<PoisonReason> {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (err) {
    if (err instanceof CrashPoison) return err.reason;
    throw err;
  }
  throw new Error('expected a CrashPoison, nothing was thrown');
}

describe.each(['ue5', 'ue4'] as const)('the %s layout', (layout) => {
  test('reads the header, every file (names NUL-trimmed) and the context fields', async () => {
    const parsed = await parseCrashUpload(crashUploadBody(typicalCrashFiles(fields), layout));
    expect(parsed.archive.layout).toBe(layout);
    expect(parsed.archive.directoryName).toBe('UECC-Windows-0123456789ABCDEF_0000');
    expect(parsed.archive.fileName).toBe('UECC-Windows-0123456789ABCDEF_0000.uecrash');
    expect(parsed.files.map((f) => [f.index, f.name, f.kind])).toEqual([
      [0, 'CrashContext.runtime-xml', 'context'],
      [1, 'UEMinidump.dmp', 'minidump'],
      [2, 'ShooterGame.log', 'log'],
    ]);
    expect(parsed.files[1].data.equals(fakeMinidump())).toBe(true);
    expect(parsed.context).toEqual({
      crashGuid: fields.crashGuid,
      type: 'crash',
      errorMessage: fields.errorMessage,
      callstack: fields.callstack,
      portableCallstack: fields.portableCallstack,
      engineVersion: fields.engineVersion,
      buildVersion: fields.buildVersion,
      buildConfiguration: 'Shipping',
      platform: 'WindowsClient',
      gameName: 'UE-ShooterGame',
      executableName: 'ShooterGame',
      userName: 'player1',
      loginId: 'login-abc',
      epicAccountId: 'epic-123',
      crashedAt,
      gameData: { HearthPlayerId: 'p_ABCDEF', Map: 'Highrise' },
      claimedPlayerId: 'p_ABCDEF',
    });
  });

  test('an archive with no files at all has no context', async () => {
    expect(await poisonOf(parseCrashUpload(crashUploadBody([], layout)))).toBe('no-context');
  });

  test('truncated anywhere: truncated or a length past the end, never a crash of the parser', async () => {
    const whole = archiveBytes(typicalCrashFiles(fields), layout);
    const seen = new Set<PoisonReason>();
    for (const cut of [1, 3, 5, 100, 270, 600, whole.length - 700, whole.length - 5, whole.length - 1]) {
      const reason = await poisonOf(() => parseCrashArchive(whole.subarray(0, cut)));
      // Legacy's count is the last four bytes: a cut there reads some other count, and may leave bytes over.
      expect(['truncated', 'length-out-of-bounds', 'too-many-files', ...(layout === 'ue4' ? ['trailing-bytes'] : [])]).toContain(reason);
      seen.add(reason);
    }
    expect(seen.has('truncated') || seen.has('length-out-of-bounds')).toBe(true);
  });

  test('trailing bytes are refused', async () => {
    const whole = archiveBytes(typicalCrashFiles(fields), layout);
    if (layout === 'ue5') {
      expect(await poisonOf(() => parseCrashArchive(Buffer.concat([whole, Buffer.from([0])])))).toBe('trailing-bytes');
    } else {
      // Legacy: the count is the last four bytes, so extra bytes go before a copy of the closing header.
      const closing = whole.subarray(whole.length - (4 + 260 + 4 + 268 + 8));
      const padded = Buffer.concat([whole.subarray(0, whole.length - closing.length), closing, closing]);
      expect(await poisonOf(() => parseCrashArchive(padded))).toBe('trailing-bytes');
    }
  });
});

describe('lying lengths', () => {
  const context = { name: 'CrashContext.runtime-xml', data: contextXml(fields) };

  test('a file length pointing past the end', async () => {
    const lying = Buffer.concat([
      Buffer.from('CR1'),
      ueString('d'),
      ueString('d.uecrash'),
      i32(0),
      i32(1),
      i32(0),
      ueString('x.log'),
      i32(1000),
      Buffer.alloc(10),
    ]);
    expect(await poisonOf(() => parseCrashArchive(lying))).toBe('length-out-of-bounds');
  });

  test('a huge declared length (2 GB) is refused before anything is allocated', async () => {
    const lying = Buffer.concat([
      Buffer.from('CR1'),
      ueString('d'),
      ueString('d.uecrash'),
      i32(0),
      i32(1),
      i32(0),
      ueString('x.log'),
      i32(0x7fffffff),
      Buffer.alloc(10),
    ]);
    expect(await poisonOf(() => parseCrashArchive(lying))).toBe('length-out-of-bounds');
  });

  test('a negative length', async () => {
    const lying = Buffer.concat([
      Buffer.from('CR1'),
      ueString('d'),
      ueString('d.uecrash'),
      i32(0),
      i32(1),
      i32(0),
      ueString('x.log'),
      i32(-1),
      Buffer.alloc(10),
    ]);
    expect(await poisonOf(() => parseCrashArchive(lying))).toBe('length-out-of-bounds');
  });

  test('a string length past the string cap', async () => {
    const lying = Buffer.concat([Buffer.from('CR1'), i32(100_000), Buffer.alloc(100_000)]);
    expect(await poisonOf(() => parseCrashArchive(lying))).toBe('length-out-of-bounds');
  });

  test('a FileCount of more files than the bytes can hold', async () => {
    const lying = Buffer.concat([Buffer.from('CR1'), ueString('d'), ueString('d.uecrash'), i32(0), i32(1000), entries([context])]);
    expect(await poisonOf(() => parseCrashArchive(lying))).toBe('too-many-files');
  });

  test('a FileCount past the absolute cap even when the bytes could hold it', async () => {
    const many = Array.from({ length: MAX_FILES + 1 }, (_, i) => ({ name: `f${i}.txt`, data: '' }));
    expect(await poisonOf(() => parseCrashArchive(archiveBytes(many, 'ue5')))).toBe('too-many-files');
    expect(await poisonOf(() => parseCrashArchive(archiveBytes(many, 'ue4')))).toBe('too-many-files');
  });

  test('a FileCount that says fewer files than there are leaves trailing bytes', async () => {
    const lying = Buffer.concat([Buffer.from('CR1'), ueString('d'), ueString('d.uecrash'), i32(0), i32(1), entries([context, context])]);
    expect(await poisonOf(() => parseCrashArchive(lying))).toBe('trailing-bytes');
  });

  test('a legacy FileCount (the last four bytes) that lies', async () => {
    const legacy = archiveBytes([context], 'ue4');
    legacy.writeInt32LE(3, legacy.length - 4);
    expect(['truncated', 'length-out-of-bounds']).toContain(await poisonOf(() => parseCrashArchive(legacy)));
    legacy.writeInt32LE(-2, legacy.length - 4);
    expect(await poisonOf(() => parseCrashArchive(legacy))).toBe('too-many-files');
  });
});

describe('the body', () => {
  test('not zlib', async () => {
    expect(await poisonOf(parseCrashUpload(Buffer.from('PK\x03\x04 this is a zip, not a zlib stream')))).toBe('inflate-failed');
  });

  test('a zlib stream cut short', async () => {
    const body = crashUploadBody(typicalCrashFiles(fields));
    expect(await poisonOf(parseCrashUpload(body.subarray(0, body.length - 10)))).toBe('inflate-failed');
  });

  test('a zip bomb past the cap is refused without inflating it all', async () => {
    // 64 MiB of zeros compress to ~64 KB; with a 1 MiB cap zlib stops at the cap.
    const bomb = zlib.deflateSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    expect(bomb.length).toBeLessThan(100_000);
    const before = process.memoryUsage().arrayBuffers;
    expect(await poisonOf(parseCrashUpload(bomb, 1024 * 1024))).toBe('inflated-too-large');
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(32 * 1024 * 1024);
  });

  test('an archive just under the cap is read', async () => {
    const body = crashUploadBody(typicalCrashFiles(fields));
    const size = archiveBytes(typicalCrashFiles(fields)).length;
    await expect(parseCrashUpload(body, size)).resolves.toBeDefined();
    expect(await poisonOf(parseCrashUpload(body, size - 1))).toBe('inflated-too-large');
  });
});

describe('the context', () => {
  const upload = (xml: string | Buffer) => parseCrashUpload(compress(archiveBytes([{ name: 'CrashContext.runtime-xml', data: xml }])));

  test('not well-formed', async () => {
    expect(await poisonOf(upload('<FGenericCrashContext><RuntimeProperties></FGenericCrashContext>'))).toBe('bad-xml');
  });

  test('a DOCTYPE with entities (billion laughs) is refused, never expanded', async () => {
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><FGenericCrashContext><RuntimeProperties><ErrorMessage>&lol2;</ErrorMessage></RuntimeProperties></FGenericCrashContext>`;
    expect(await poisonOf(upload(laughs))).toBe('bad-xml');
  });

  test('another root element', async () => {
    expect(await poisonOf(upload('<Something><RuntimeProperties/></Something>'))).toBe('bad-xml');
  });

  test('a context found by name whatever its folder and case; predefined entities decoded once', async () => {
    const parsed = await parseCrashUpload(
      compress(archiveBytes([{ name: 'Crash\\crashcontext.RUNTIME-XML', data: contextXml({ errorMessage: 'TArray<int> & &amp;lt; ☃' }) }])),
    );
    // Written escaped once by the encoder, decoded once: exactly the text the game wrote.
    expect(parsed.context.errorMessage).toBe('TArray<int> & &amp;lt; ☃');
    expect(parsed.context.type).toBe('crash');
    expect(parsed.context.claimedPlayerId).toBeNull();
  });

  test('a UTF-16 context with a byte-order mark', async () => {
    const xml = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(contextXml({ gameName: 'Ünreal' }), 'utf16le')]);
    expect(readCrashContext(xml).gameName).toBe('Ünreal');
  });

  test('the type from CrashType, else IsEnsure / IsAssert', () => {
    expect(readCrashContext(Buffer.from(contextXml({ crashType: 'GPUCrash' }))).type).toBe('gpu-crash');
    expect(readCrashContext(Buffer.from(contextXml({ crashType: 'Hang' }))).type).toBe('hang');
    expect(readCrashContext(Buffer.from(contextXml({ isEnsure: true }))).type).toBe('ensure');
    expect(readCrashContext(Buffer.from(contextXml({ isAssert: true }))).type).toBe('assert');
  });

  test('.NET ticks to time; nonsense to null', () => {
    expect(ticksToDate(dotNetTicks(crashedAt))?.toISOString()).toBe('2026-11-20T18:04:05.123Z');
    expect(ticksToDate('630822816000000000')?.toISOString()).toBe('2000-01-01T00:00:00.000Z'); // .NET's new DateTime(2000, 1, 1).Ticks
    expect(ticksToDate('0')).toBeNull();
    expect(ticksToDate('abc')).toBeNull();
    expect(ticksToDate('99999999999999999999')).toBeNull();
  });

  test('character references decoded, unknown entities left as written', () => {
    expect(decodeXmlText('&#65;&#x42;&nbsp;&amp;amp;')).toBe('AB&nbsp;&amp;');
  });
});

test('files are classified by name and first bytes', () => {
  const f = (name: string, data: string | Buffer) => classifyFile({ index: 0, name, data: Buffer.from(data) });
  expect(f('x.dmp', 'MDMP....')).toBe('minidump');
  expect(f('anything', 'MDMP')).toBe('minidump');
  expect(f('crash.ips', 'Incident Identifier: 1234-5678')).toBe('apple-crash-report');
  expect(f('Saved/Logs/Game.log', 'x')).toBe('log');
  expect(f('CrashReportClient.ini', '[x]')).toBe('config');
  expect(f('Diagnostics.txt', 'x')).toBe('other');
});
