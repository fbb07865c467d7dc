/**
 * Crash reports and symbol files (spec §4 Crash reports, §8; docs/crashes.md): what an upload and a
 * symbol request send and what they answer, declared once for the route's validation, the document
 * and the crash services.
 */
import { Type, type Static } from '@sinclair/typebox';
import { PageQuery, Shape, Timestamp } from './common';

/** Spec §8: up to 4 GB (binary units: docs/api-conventions.md). */
export const SYMBOL_MAX_BYTES = 4 * 1024 ** 3;

/**
 * The spec's character sets; "no part may contain `..`", and a part may not be `.` alone either
 * (it would name the folder above in a path or a key).
 */
const notDots = '(?!.*\\.\\.)(?!\\.$)';
export const SymbolLabel = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: `^${notDots}[A-Za-z0-9*+._-]+$`,
  description: "the build's symbols label: letters, digits and `* + . _ -`, up to 200, no `..`",
});
export const SymbolVersion = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: `^${notDots}[A-Za-z0-9+._-]+$`,
  description: 'letters, digits and `+ . _ -`, up to 64, no `..`',
});
export const SymbolFileName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: `^${notDots}[A-Za-z0-9+._-]+$`,
  description: 'no folders: letters, digits and `+ . _ -`, up to 200, no `..`',
});

/** POST /crash-symbols/uploads: the file, and the exact size and digest its upload must have. */
export const SymbolUploadRequest = Type.Object(
  {
    label: SymbolLabel,
    version: SymbolVersion,
    fileName: SymbolFileName,
    sizeBytes: Type.Integer({ minimum: 1, maximum: SYMBOL_MAX_BYTES, description: 'the exact size in bytes, up to 4 GB' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: '64 lower-case hex digits' }),
  },
  { additionalProperties: false },
);
export type SymbolUploadRequest = Static<typeof SymbolUploadRequest>;

/** The presigned PUT a symbol request answers. */
export const SymbolUpload = Shape('SymbolUpload', {
  url: Type.String({ description: 'PUT the file here' }),
  headers: Type.Object(
    {
      'Content-Length': Type.String({ description: 'sizeBytes' }),
      'x-amz-checksum-sha256': Type.String({ description: 'base64 of the raw SHA-256 digest' }),
    },
    { additionalProperties: false, description: 'send exactly these headers with the PUT' },
  ),
  key: Type.String({ description: 'where the file is kept' }),
  expiresAt: Timestamp,
});
export type SymbolUpload = Static<typeof SymbolUpload>;

/** A symbol file whose upload completed. */
export const SymbolFile = Shape('SymbolFile', {
  label: Type.String(),
  version: Type.String(),
  name: Type.String(),
  sizeBytes: Type.Integer(),
  updatedAt: Timestamp,
});
export type SymbolFile = Static<typeof SymbolFile>;

/** GET /crash-symbols/files: optionally of one label and version. */
export const SymbolListQuery = Type.Object(
  { label: Type.Optional(SymbolLabel), version: Type.Optional(SymbolVersion), ...PageQuery },
  { additionalProperties: false },
);
export type SymbolListQuery = Static<typeof SymbolListQuery>;

/** The reporter's query parameters are kept as sent, cut to this many characters (never trusted). */
export const CRASH_PARAMETER_KEPT_CHARS = 256;

/**
 * The reporter's own parameters. They are kept with the upload (cut to 256 characters) and never
 * trusted; the bound here only refuses what no reporter sends (a query the size of a body).
 */
const ReporterParameter = (description: string) =>
  Type.Optional(Type.String({ maxLength: 2048, description: `${description}; kept as sent, cut to ${CRASH_PARAMETER_KEPT_CHARS} characters, not trusted` }));

/** POST /crash-reports/:appKey: the environment the reporter was built for. */
export const CrashReportPath = Type.Object(
  { appKey: Type.String({ minLength: 1, maxLength: 64, description: "the environment's app key" }) },
  { additionalProperties: false },
);

/** What Unreal's CrashReportClient says about itself in the query, every one optional. */
export const CrashReporterQuery = Type.Object(
  {
    AppID: ReporterParameter('the reporter\'s application id (Unreal sends "CrashReporter")'),
    AppVersion: ReporterParameter("the engine's version"),
    AppEnvironment: ReporterParameter('Release or Dev'),
    UploadType: ReporterParameter('"crashreports"'),
    UserID: ReporterParameter("the reporter's user ids, LoginId|EpicAccountId|OperatingSystemId"),
  },
  { additionalProperties: false },
);
export type CrashReporterQuery = Static<typeof CrashReporterQuery>;

/** What an upload kept and queued answers. */
export const CrashReceived = Type.Object({ received: Type.Literal(true) }, { additionalProperties: false });
