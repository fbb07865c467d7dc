/**
 * The body is one zlib stream (RFC 1950). It is inflated with an output cap: zlib stops as soon as
 * the output would pass `maxBytes`, so a small body that inflates to gigabytes (a zip bomb) costs at
 * most the cap in memory before it is refused. The async form runs on libuv's thread pool, so the
 * worker's event loop keeps answering /metrics and its other jobs meanwhile.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { CrashPoison } from './poison';

const inflateAsync = promisify(zlib.inflate) as (buffer: Buffer, options: zlib.ZlibOptions) => Promise<Buffer>;

/** 128 MiB: a full minidump with a few logs fits; the worker's CRASH_MAX_INFLATED_BYTES changes it. */
export const DEFAULT_MAX_INFLATED_BYTES = 128 * 1024 * 1024;

export async function inflateCapped(body: Buffer, maxBytes: number = DEFAULT_MAX_INFLATED_BYTES): Promise<Buffer> {
  try {
    return await inflateAsync(body, { maxOutputLength: maxBytes });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) {
      throw new CrashPoison('inflated-too-large', `the body inflates past ${maxBytes} bytes`);
    }
    throw new CrashPoison('inflate-failed', e.message);
  }
}
