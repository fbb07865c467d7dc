import { deriveKey } from '../sealing';
import type { ObjectStorageConfig } from '../config';
import { DiskObjectStore } from './disk-store';
import type { ObjectStore } from './object-store';
import { S3ObjectStore } from './s3-store';

/**
 * The object store a process's configuration names (OBJECT_STORAGE_URL, read by loadConfig), or
 * undefined when it names none. The master key keys the disk store's upload URLs, so every API
 * process over one folder accepts the URLs the others hand out; processes that hand out none (the
 * crash worker) need not have it.
 */
export function openObjectStore(config: ObjectStorageConfig | undefined, masterKey?: Buffer): ObjectStore | undefined {
  if (!config) return undefined;
  if (config.kind === 'disk') return new DiskObjectStore(config.folder, masterKey ? { uploadKey: deriveKey(masterKey, 'object-uploads') } : {});
  return new S3ObjectStore({
    bucket: config.bucket,
    prefix: config.prefix,
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
  });
}
