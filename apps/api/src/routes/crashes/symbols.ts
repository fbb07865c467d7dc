/**
 * Symbol files (spec §4 Crash reports, §8; docs/crashes.md "Symbol files"): upload URLs that pin a
 * file's size and digest, and the list of files whose upload completed.
 */
import { Type } from '@sinclair/typebox';
import { SYMBOL_MAX_BYTES } from '@hearth/core';
import { defineRoute } from '../../http/route';
import { PageOf, PageQuery, Timestamp } from '../../http/schema-helpers';

/**
 * The spec's character sets; "no part may contain `..`", and a part may not be `.` alone either
 * (it would name the folder above in a path or a key).
 */
const notDots = '(?!.*\\.\\.)(?!\\.$)';
export const SymbolLabel = Type.String({ minLength: 1, maxLength: 200, pattern: `^${notDots}[A-Za-z0-9*+._-]+$`, description: "the build's symbols label: letters, digits and `* + . _ -`, up to 200, no `..`" });
export const SymbolVersion = Type.String({ minLength: 1, maxLength: 64, pattern: `^${notDots}[A-Za-z0-9+._-]+$`, description: 'letters, digits and `+ . _ -`, up to 64, no `..`' });
export const SymbolFileName = Type.String({ minLength: 1, maxLength: 200, pattern: `^${notDots}[A-Za-z0-9+._-]+$`, description: 'no folders: letters, digits and `+ . _ -`, up to 200, no `..`' });

const SymbolUploadRequest = Type.Object(
  {
    label: SymbolLabel,
    version: SymbolVersion,
    fileName: SymbolFileName,
    sizeBytes: Type.Integer({ minimum: 1, maximum: SYMBOL_MAX_BYTES, description: 'the exact size in bytes, up to 4 GB' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: '64 lower-case hex digits' }),
  },
  { additionalProperties: false },
);

const SymbolUpload = Type.Object(
  {
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
  },
  { $id: 'SymbolUpload', additionalProperties: false },
);

const SymbolFile = Type.Object(
  { label: Type.String(), version: Type.String(), name: Type.String(), sizeBytes: Type.Integer(), updatedAt: Timestamp },
  { $id: 'SymbolFile', additionalProperties: false },
);

export const createSymbolUpload = defineRoute({
  operationId: 'createSymbolUpload',
  method: 'POST',
  path: '/crash-symbols/uploads',
  summary: 'An upload URL for a symbol file of a known size and SHA-256',
  description:
    'The file is sent by PUT to `url` with exactly `headers` before `expiresAt` (one hour); the storage refuses a body of another size or digest. ' +
    'The file is listed by GET /crash-symbols/files once its upload has completed. A new request for the same file replaces the pending one.',
  tag: 'crashes',
  credential: 'server',
  service: 'crashes',
  body: SymbolUploadRequest,
  success: { status: 200, description: 'The presigned PUT', schema: SymbolUpload },
  refusals: ['unavailable'],
  handler: async (ctx) => {
    const origin = `${ctx.request.protocol}://${ctx.request.host}`;
    return { body: await ctx.core.symbols.requestUpload(ctx.db, ctx.env, ctx.body, origin) };
  },
});

export const listSymbolFiles = defineRoute({
  operationId: 'listSymbolFiles',
  method: 'GET',
  path: '/crash-symbols/files',
  summary: 'Symbol files whose upload completed, ordered by label, version, name',
  description:
    "Pages through the symbol files whose upload finished (an upload begun but not completed is left out), optionally of one label and version. Crash reports from builds with these files get readable stacks.",
  tag: 'crashes',
  credential: 'server',
  service: 'crashes',
  query: Type.Object({ label: Type.Optional(SymbolLabel), version: Type.Optional(SymbolVersion), ...PageQuery }, { additionalProperties: false }),
  success: { status: 200, description: 'A page of symbol files', schema: PageOf(SymbolFile) },
  refusals: ['unavailable'],
  handler: async (ctx) => {
    return { body: await ctx.core.symbols.list(ctx.db, ctx.env, ctx.query) };
  },
});
