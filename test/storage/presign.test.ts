/**
 * The S3 presigned PUT (apps/core/src/storage/s3-store.ts), read back from the URL itself: size and
 * checksum are signed headers (not hoisted into the query, where S3 would not check them), and no
 * checksum of the SDK's own (a CRC32 of the empty body since 3.729) is signed in. The S3 server's refusals
 * are in test/storage/s3-store.test.ts and test/crashes/symbols.test.ts.
 */
import { createHash } from 'node:crypto';
import { S3ObjectStore } from '@hearth/core/storage';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const digest = createHash('sha256').update('symbols').digest('hex');

describe('S3ObjectStore.presignPut', () => {
  const store = new S3ObjectStore({
    bucket: 'hearth-test',
    prefix: 'pre/',
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    forcePathStyle: true,
    credentials,
  });
  afterAll(() => store.close());

  test('signs content-length, host and x-amz-checksum-sha256, and nothing else', async () => {
    const put = await store.presignPut('symbols/1/Game/1.0/Game.pdb', { sizeBytes: 7, sha256Hex: digest, expiresInSeconds: 3600, apiOrigin: 'http://ignored' });
    const url = new URL(put.url);
    expect(url.pathname).toBe('/hearth-test/pre/symbols/1/Game/1.0/Game.pdb');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host;x-amz-checksum-sha256');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
    const names = [...url.searchParams.keys()].map((k) => k.toLowerCase());
    expect(names).not.toContain('x-amz-checksum-crc32');
    expect(names).not.toContain('x-amz-sdk-checksum-algorithm');
    expect(names).not.toContain('x-amz-checksum-sha256');
    expect(put.headers).toEqual({ 'Content-Length': '7', 'x-amz-checksum-sha256': Buffer.from(digest, 'hex').toString('base64') });
    // expiresAt is the signature's: signing time (whole seconds) plus the hour.
    const signedAt = url.searchParams.get('X-Amz-Date')!;
    const signed = Date.parse(signedAt.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
    expect(put.expiresAt.getTime()).toBe(signed + 3600_000);
  });
});
