/**
 * The crash context (`CrashContext.runtime-xml`): `<FGenericCrashContext>` with `<RuntimeProperties>`
 * (the fields below), `<PlatformProperties>`, and the open `<EngineData>` and `<GameData>` bags.
 * Read with fast-xml-parser with entity processing off, and any DOCTYPE refused outright, so no
 * entity is ever defined or expanded (no billion laughs, no external entities); the five predefined
 * entities and character references, which UE writes in callstacks (`TArray&lt;int&gt;`), are
 * decoded here, once, without recursion. Unknown elements are ignored.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { CrashFields, CrashRecordInput } from '@hearth/core/crashes';
import { CrashPoison } from './poison';

/** The GameData key a game writes its Hearth player id under (docs/crashes.md, "The crash format"). */
export const PLAYER_ID_GAME_DATA_KEY = 'HearthPlayerId';

/** Lengths kept (characters): enough for any real message or callstack, bounded for the database. */
export const FIELD_LIMITS = { short: 256, message: 4096, callstack: 65536, gameDataKeys: 64, gameDataValue: 1024 } as const;

/**
 * What the context XML says of its crash: the fields a crash record keeps (but the user id, which
 * comes from the upload's query), with the reporter's login id beside them.
 */
export type CrashContext = Omit<CrashFields, 'userId'> &
  Pick<CrashRecordInput, 'crashedAt' | 'claimedPlayerId'> & {
    loginId: string | null;
  };

const parser = new XMLParser({
  processEntities: false,
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  parseTagValue: false,
  trimValues: true,
});

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The predefined entities and numeric character references, decoded in one pass (so `&amp;lt;` stays `&lt;`). */
export function decodeXmlText(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|amp|lt|gt|quot|apos);/g, (whole, ref: string) => {
    if (ref[0] !== '#') return PREDEFINED[ref];
    const code = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

/** UE writes the context as UTF-8 (older engines: UTF-16 with a byte-order mark). */
function decodeText(data: Buffer): string {
  if (data[0] === 0xff && data[1] === 0xfe) return data.subarray(2).toString('utf16le');
  if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) return data.subarray(3).toString('utf8');
  return data.toString('utf8');
}

function text(node: unknown): string | null {
  if (Array.isArray(node)) return text(node[0]);
  if (typeof node !== 'string') return null;
  return decodeXmlText(node);
}

function field(bag: Record<string, unknown>, name: string, limit: number): string | null {
  const value = text(bag[name])?.trim();
  return value ? value.slice(0, limit) : null;
}

/** .NET ticks (100 ns since 0001-01-01 UTC) → a Date; absurd values → null. */
export function ticksToDate(ticks: string | null): Date | null {
  if (!ticks || !/^\d{1,20}$/.test(ticks)) return null;
  const UNIX_EPOCH_TICKS = 621355968000000000n;
  const ms = Number((BigInt(ticks) - UNIX_EPOCH_TICKS) / 10000n);
  const date = new Date(ms);
  return Number.isFinite(date.getTime()) && date.getUTCFullYear() >= 2000 && date.getUTCFullYear() <= 2200 ? date : null;
}

const TYPES: Record<string, string> = {
  crash: 'crash',
  assert: 'assert',
  ensure: 'ensure',
  gpucrash: 'gpu-crash',
  hang: 'hang',
  abnormalshutdown: 'abnormal-shutdown',
  outofmemory: 'out-of-memory',
};

function crashType(runtime: Record<string, unknown>): string {
  const named = field(runtime, 'CrashType', 64)
    ?.toLowerCase()
    .replace(/[^a-z0-9]/g, '');
  if (named) return TYPES[named] ?? named;
  if (field(runtime, 'IsEnsure', 8)?.toLowerCase() === 'true') return 'ensure';
  if (field(runtime, 'IsAssert', 8)?.toLowerCase() === 'true') return 'assert';
  return 'crash';
}

function bag(node: unknown): Record<string, unknown> {
  return node !== null && typeof node === 'object' && !Array.isArray(node) ? (node as Record<string, unknown>) : {};
}

export function readCrashContext(data: Buffer): CrashContext {
  const xml = decodeText(data);
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new CrashPoison('bad-xml', 'the context declares a DOCTYPE or entities');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new CrashPoison('bad-xml', `${valid.err.msg} (line ${valid.err.line})`);
  const root = bag(parser.parse(xml)).FGenericCrashContext;
  if (root === undefined) throw new CrashPoison('bad-xml', 'no FGenericCrashContext element');
  const runtime = bag(bag(root).RuntimeProperties);
  const gameBag = bag(bag(root).GameData);

  const gameData: Record<string, string> = {};
  for (const [key, value] of Object.entries(gameBag).slice(0, FIELD_LIMITS.gameDataKeys)) {
    const v = text(value);
    if (v !== null) gameData[key.slice(0, FIELD_LIMITS.short)] = v.slice(0, FIELD_LIMITS.gameDataValue);
  }
  const short = (name: string) => field(runtime, name, FIELD_LIMITS.short);
  return {
    crashGuid: short('CrashGUID'),
    type: crashType(runtime),
    errorMessage: field(runtime, 'ErrorMessage', FIELD_LIMITS.message),
    callstack: field(runtime, 'CallStack', FIELD_LIMITS.callstack),
    portableCallstack: field(runtime, 'PCallStack', FIELD_LIMITS.callstack),
    engineVersion: short('EngineVersion'),
    buildVersion: short('BuildVersion'),
    buildConfiguration: short('BuildConfiguration'),
    platform: short('PlatformName'),
    gameName: short('GameName'),
    executableName: short('ExecutableName'),
    userName: short('UserName'),
    loginId: short('LoginId'),
    epicAccountId: short('EpicAccountId'),
    crashedAt: ticksToDate(short('TimeOfCrash')),
    gameData,
    claimedPlayerId: gameData[PLAYER_ID_GAME_DATA_KEY]?.trim().slice(0, FIELD_LIMITS.short) || null,
  };
}
