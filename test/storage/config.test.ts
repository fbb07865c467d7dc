/**
 * OBJECT_STORAGE_URL and the S3_* variables (apps/core/src/config.ts): what each form gives, and
 * that every malformed value stops the process with a message naming its variable.
 */
import { ConfigError, loadConfig } from '@hearth/core';
import { DiskObjectStore, S3ObjectStore, openObjectStore } from '@hearth/core/storage';

const storageOf = (env: Record<string, string>) => loadConfig(env).objectStorage;

function refusal(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('OBJECT_STORAGE_URL', () => {
  test('absent or empty: no object store', () => {
    expect(storageOf({})).toBeUndefined();
    expect(storageOf({ OBJECT_STORAGE_URL: '' })).toBeUndefined();
    expect(openObjectStore(undefined, Buffer.alloc(32))).toBeUndefined();
  });

  test('s3://BUCKET: the defaults (us-east-1, virtual-hosted style, the SDK default endpoint)', () => {
    expect(storageOf({ OBJECT_STORAGE_URL: 's3://hearth-crashes' })).toEqual({
      kind: 's3',
      bucket: 'hearth-crashes',
      prefix: '',
      endpoint: undefined,
      region: 'us-east-1',
      forcePathStyle: false,
    });
  });

  test('s3://BUCKET/PREFIX with S3_ENDPOINT, S3_REGION, S3_FORCE_PATH_STYLE', () => {
    const config = storageOf({
      OBJECT_STORAGE_URL: 's3://my.bucket-1/prod/hearth/',
      S3_ENDPOINT: 'http://127.0.0.1:9000',
      S3_REGION: 'eu-west-3',
      S3_FORCE_PATH_STYLE: 'true',
    });
    expect(config).toEqual({
      kind: 's3',
      bucket: 'my.bucket-1',
      prefix: 'prod/hearth/',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-3',
      forcePathStyle: true,
    });
    expect(openObjectStore(config, Buffer.alloc(32))).toBeInstanceOf(S3ObjectStore);
  });

  test('file:///ABSOLUTE/FOLDER: the folder on disk', () => {
    const config = storageOf({ OBJECT_STORAGE_URL: 'file:///var/lib/hearth/objects/' });
    expect(config).toEqual({ kind: 'disk', folder: '/var/lib/hearth/objects' });
    const store = openObjectStore(config, Buffer.alloc(32));
    expect(store).toBeInstanceOf(DiskObjectStore);
    expect((store as DiskObjectStore).root).toBe('/var/lib/hearth/objects');
  });

  test.each([
    ['not a URL', { OBJECT_STORAGE_URL: 'bucket' }, 'OBJECT_STORAGE_URL'],
    ['another scheme', { OBJECT_STORAGE_URL: 'gs://bucket' }, 'OBJECT_STORAGE_URL'],
    ['a bucket name S3 refuses (upper case)', { OBJECT_STORAGE_URL: 's3://Bucket' }, 'OBJECT_STORAGE_URL'],
    ['a bucket name too short', { OBJECT_STORAGE_URL: 's3://ab' }, 'OBJECT_STORAGE_URL'],
    ['credentials in the URL', { OBJECT_STORAGE_URL: 's3://user:secret@bucket' }, 'OBJECT_STORAGE_URL'],
    ['a port', { OBJECT_STORAGE_URL: 's3://bucket:9000' }, 'OBJECT_STORAGE_URL'],
    ['a query', { OBJECT_STORAGE_URL: 's3://bucket?region=x' }, 'OBJECT_STORAGE_URL'],
    ['a prefix with odd characters', { OBJECT_STORAGE_URL: 's3://bucket/a b' }, 'OBJECT_STORAGE_URL'],
    ['a file URL with a host', { OBJECT_STORAGE_URL: 'file://server/share' }, 'OBJECT_STORAGE_URL'],
    ['a file URL of the root', { OBJECT_STORAGE_URL: 'file:///' }, 'OBJECT_STORAGE_URL'],
    ['an endpoint that is not http(s)', { OBJECT_STORAGE_URL: 's3://bucket', S3_ENDPOINT: 'ftp://127.0.0.1' }, 'S3_ENDPOINT'],
    ['an endpoint that is not a URL', { OBJECT_STORAGE_URL: 's3://bucket', S3_ENDPOINT: 'minio:9000x' }, 'S3_ENDPOINT'],
    ['a region with odd characters', { OBJECT_STORAGE_URL: 's3://bucket', S3_REGION: 'EU West' }, 'S3_REGION'],
    ['a path style that is not true/false', { OBJECT_STORAGE_URL: 's3://bucket', S3_FORCE_PATH_STYLE: 'yes' }, 'S3_FORCE_PATH_STYLE'],
  ])('%s is refused naming %s', (_what, env, variable) => {
    const err = refusal(env);
    expect(err.variable).toBe(variable);
    expect(err.message.startsWith(`${variable}: `)).toBe(true);
  });
});
