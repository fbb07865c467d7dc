/**
 * Symbol files (spec §4 Crash reports, §8; docs/crashes.md "Symbol files"): upload URLs that pin a
 * file's size and digest, and the list of files whose upload completed.
 */
import { SymbolFile, SymbolListQuery, SymbolUpload, SymbolUploadRequest, PageOf } from '@hearth/core/shapes';
import { crashesRoute } from './area';

export const createSymbolUpload = crashesRoute({
  operationId: 'createSymbolUpload',
  method: 'POST',
  path: '/crash-symbols/uploads',
  summary: 'An upload URL for a symbol file of a known size and SHA-256',
  description:
    'The file is sent by PUT to `url` with exactly `headers` before `expiresAt` (one hour); the storage refuses a body of another size or digest. ' +
    'The file is listed by GET /crash-symbols/files once its upload has completed. A new request for the same file replaces the pending one.',
  credential: 'server',
  body: SymbolUploadRequest,
  success: { status: 200, description: 'The presigned PUT', schema: SymbolUpload },
  refusals: ['unavailable'],
  handler: async (ctx) => {
    const origin = `${ctx.request.protocol}://${ctx.request.host}`;
    return { body: await ctx.core.symbols.requestUpload(ctx.db, ctx.env, ctx.body, origin) };
  },
});

export const listSymbolFiles = crashesRoute({
  operationId: 'listSymbolFiles',
  method: 'GET',
  path: '/crash-symbols/files',
  summary: 'Symbol files whose upload completed, ordered by label, version, name',
  description:
    'Pages through the symbol files whose upload finished (an upload begun but not completed is left out), optionally of one label and version. Crash reports from builds with these files get readable stacks.',
  credential: 'server',
  query: SymbolListQuery,
  success: { status: 200, description: 'A page of symbol files', schema: PageOf(SymbolFile) },
  refusals: ['unavailable'],
  handler: async (ctx) => {
    return { body: await ctx.core.symbols.list(ctx.db, ctx.env, ctx.query) };
  },
});
