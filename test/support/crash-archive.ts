/**
 * A small encoder of Unreal's crash archive, so tests build real uploads (docs/crashes.md, "The crash
 * format"): both layouts, strings NUL-padded to 260 bytes as UE writes them, zlib-compressed.
 * `archiveBytes` gives the inflated bytes, for tests that corrupt them before compressing.
 */
import zlib from 'node:zlib';

export interface EncodedFile {
  name: string;
  data: Buffer | string;
}

export type Layout = 'ue5' | 'ue4';

/** UE's ANSI string: u32 length, then the bytes padded with NULs to at least 260. */
export function ueString(text: string, pad = 260): Buffer {
  const body = Buffer.alloc(Math.max(pad, Buffer.byteLength(text, 'latin1') + 1));
  body.write(text, 'latin1');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(body.length);
  return Buffer.concat([length, body]);
}

export function i32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n);
  return b;
}

function header(directory: string, fileCount: number, uncompressedSize: number): Buffer {
  return Buffer.concat([ueString(directory), ueString(`${directory}.uecrash`), i32(uncompressedSize), i32(fileCount)]);
}

export function entries(files: EncodedFile[]): Buffer {
  return Buffer.concat(
    files.flatMap((f, index) => {
      const data = typeof f.data === 'string' ? Buffer.from(f.data, 'utf8') : f.data;
      return [i32(index), ueString(f.name), i32(data.length), data];
    }),
  );
}

/** The inflated archive in `layout`. */
export function archiveBytes(files: EncodedFile[], layout: Layout = 'ue5', directory = 'UECC-Windows-0123456789ABCDEF_0000'): Buffer {
  const body = entries(files);
  const size = body.length;
  if (layout === 'ue5') return Buffer.concat([Buffer.from('CR1', 'latin1'), header(directory, files.length, size), body]);
  // Legacy: a placeholder header (UE writes zeros there), the files, the real header last.
  return Buffer.concat([header('', 0, 0), body, header(directory, files.length, size)]);
}

export function compress(bytes: Buffer): Buffer {
  return zlib.deflateSync(bytes);
}

/** What CrashReportClient would POST: the archive, compressed. */
export function crashUploadBody(files: EncodedFile[], layout: Layout = 'ue5'): Buffer {
  return compress(archiveBytes(files, layout));
}

export interface ContextFields {
  crashGuid?: string;
  crashType?: string;
  isAssert?: boolean;
  isEnsure?: boolean;
  errorMessage?: string;
  callstack?: string;
  portableCallstack?: string;
  engineVersion?: string;
  buildVersion?: string;
  buildConfiguration?: string;
  platformName?: string;
  gameName?: string;
  executableName?: string;
  userName?: string;
  loginId?: string;
  epicAccountId?: string;
  /** Written as .NET ticks, as UE does. */
  timeOfCrash?: Date;
  gameData?: Record<string, string>;
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function dotNetTicks(date: Date): string {
  return (BigInt(date.getTime()) * 10000n + 621355968000000000n).toString();
}

/** A CrashContext.runtime-xml as UE writes it (the fields given, and a few the parser ignores). */
export function contextXml(f: ContextFields = {}): string {
  const prop = (name: string, value: string | boolean | undefined) => (value === undefined ? '' : `\t\t<${name}>${escape(String(value))}</${name}>\n`);
  const gameData = Object.entries(f.gameData ?? {})
    .map(([k, v]) => `\t\t<${k}>${escape(v)}</${k}>\n`)
    .join('');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<FGenericCrashContext>\n\t<RuntimeProperties>\n' +
    prop('CrashVersion', '3') +
    prop('CrashGUID', f.crashGuid) +
    prop('IsEnsure', f.isEnsure) +
    prop('IsAssert', f.isAssert) +
    prop('CrashType', f.crashType) +
    prop('ErrorMessage', f.errorMessage) +
    prop('CallStack', f.callstack) +
    prop('PCallStack', f.portableCallstack) +
    prop('EngineVersion', f.engineVersion) +
    prop('BuildVersion', f.buildVersion) +
    prop('BuildConfiguration', f.buildConfiguration) +
    prop('PlatformName', f.platformName) +
    prop('GameName', f.gameName) +
    prop('ExecutableName', f.executableName) +
    prop('UserName', f.userName) +
    prop('LoginId', f.loginId) +
    prop('EpicAccountId', f.epicAccountId) +
    prop('TimeOfCrash', f.timeOfCrash ? dotNetTicks(f.timeOfCrash) : undefined) +
    prop('SecondsSinceStart', '42') +
    '\t\t<Modules>UnrealGame.exe\nkernel32.dll</Modules>\n' +
    '\t</RuntimeProperties>\n\t<PlatformProperties>\n\t\t<PlatformIsRunningWindows>1</PlatformIsRunningWindows>\n\t</PlatformProperties>\n' +
    '\t<EngineData>\n\t\t<MatchingDPStatus>WindowsNo errors</MatchingDPStatus>\n\t</EngineData>\n' +
    `\t<GameData>\n${gameData}\t</GameData>\n</FGenericCrashContext>\n`
  );
}

/** A minidump's first bytes (the parser classifies by the `MDMP` signature; the rest is opaque). */
export function fakeMinidump(size = 512): Buffer {
  const b = Buffer.alloc(size, 0x41);
  b.write('MDMP', 0, 'latin1');
  return b;
}

/** The files of a typical UE crash: context, minidump, game log. */
export function typicalCrashFiles(fields: ContextFields = {}): EncodedFile[] {
  return [
    { name: 'CrashContext.runtime-xml', data: contextXml(fields) },
    { name: 'UEMinidump.dmp', data: fakeMinidump() },
    { name: 'ShooterGame.log', data: 'LogInit: Display: Running engine\nLogWindows: Error: === Critical error: ===\n' },
  ];
}
