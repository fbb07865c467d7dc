/**
 * The embedded default's presigned PUTs (DiskObjectStore.presignPut): S3 would take these uploads
 * itself; with a folder on disk the API does, at DISK_UPLOAD_PATH + token. Not an operation of the
 * spec and not in the route table (so not in /openapi.json): the URL is handed out by POST
 * /crash-symbols/uploads and used as given. It behaves like S3's presigned PUT: the token names
 * key, size, digest and expiry; a request without exactly the headers it was given, or after the
 * expiry, or with a forged token is 403; a body of another digest is 400 (BadDigest) and nothing is
 * kept; the size and digest are checked while the body streams to disk.
 */
import { refuse } from '@hearth/core';
import type { HearthCore } from '@hearth/core/hearth';
import { CHECKSUM_SHA256_HEADER, DISK_UPLOAD_PATH, DiskObjectStore } from '@hearth/core/storage';
import { addressChecks } from '@hearth/core/coord';
import type { Exchange } from './exchange';
import type { Pipeline } from './pipeline';

export function isObjectUpload(exchange: Exchange): boolean {
  return exchange.method === 'PUT' && exchange.path.startsWith(DISK_UPLOAD_PATH);
}

export async function serveObjectUpload(exchange: Exchange, core: HearthCore, pipeline: Pipeline): Promise<void> {
  exchange.routeTemplate = `${DISK_UPLOAD_PATH.replace(/^\/v1/, '')}:token`;
  try {
    // Counted like every request without a credential: against the caller's address.
    await pipeline.limit(exchange, addressChecks(exchange.ip));
    const store = core.objectStore;
    if (!(store instanceof DiskObjectStore)) throw refuse.notFound('That upload URL');
    const token = exchange.path.slice(DISK_UPLOAD_PATH.length);
    const grant = store.checkUpload(token, { contentLength: exchange.req.headers['content-length'], checksum: exchange.header(CHECKSUM_SHA256_HEADER) });
    // A URL of a request since replaced would overwrite the newer file's bytes.
    if (!(await core.symbols.uploadStillWanted(core.db, grant))) {
      throw refuse.forbidden('This upload URL was replaced by a newer request for the same file.');
    }
    const stored = await store.receiveUpload(grant, exchange.req);
    await core.symbols.completeUpload(core.db, stored);
    exchange.status = 200;
  } catch (err) {
    // A refused upload's body may be gigabytes still on the way: close rather than read it all.
    if (!exchange.req.readableEnded) exchange.setHeader('Connection', 'close');
    throw err;
  }
}
