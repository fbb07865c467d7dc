/**
 * A real S3 server for the object-storage tests: versitygw, Versity's S3 gateway, on its posix backend.
 * It checks SigV4 signatures (headers and presigned queries), presigned expiry, signed headers and
 * x-amz-checksum-sha256 against the body, which is what the symbol uploads rely on. Built once per
 * machine by test/kube/tools/build.sh (`make versitygw`, part of `make test`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore } from '@hearth/core/storage';
import { kubeToolPath } from './kube';
import { freePort } from './ports';
import { stopProcess } from './processes';

export interface S3Gateway {
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** A fresh bucket, and a store over it. */
  newStore(options?: { prefix?: string }): Promise<S3ObjectStore>;
  stop(): Promise<void>;
}

/** The path the gateway answers 200 on once it listens (its --health option). */
const HEALTH = '/health';

export async function startS3Gateway(): Promise<S3Gateway> {
  const binary = kubeToolPath('versitygw');
  // The buckets' folders in data/, and the objects' metadata in meta/ (the gateway keeps it in extended
  // attributes, or in this sidecar folder, which any file system holds).
  const root = await mkdtemp(path.join(os.tmpdir(), 'hearth-s3-'));
  const [dataDir, metaDir] = [path.join(root, 'data'), path.join(root, 'meta')];
  await Promise.all([mkdir(dataDir), mkdir(metaDir)]);
  const port = await freePort();
  const credentials = { accessKeyId: 'hearth-test', secretAccessKey: randomBytes(18).toString('hex') };
  // The gateway's own options, then its backend: a posix folder.
  const gateway = ['--port', `127.0.0.1:${port}`, '--access', credentials.accessKeyId, '--secret', credentials.secretAccessKey, '--health', HEALTH, '--quiet'];
  const backend = ['posix', '--sidecar', metaDir, dataDir];
  const child: ChildProcess = spawn(binary, [...gateway, ...backend], { env: { PATH: process.env.PATH, HOME: root }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const endpoint = `http://127.0.0.1:${port}`;

  const stop = async () => {
    await stopProcess(child, 10_000);
    await rm(root, { recursive: true, force: true });
  };

  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`versitygw exited (${child.exitCode}): ${stderr}`);
      const ready = await fetch(`${endpoint}${HEALTH}`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`versitygw was not ready within 60 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    await stop();
    throw err;
  }

  const admin = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials });
  const stores: S3ObjectStore[] = [];
  return {
    endpoint,
    credentials,
    newStore: async (options = {}) => {
      const bucket = `hearth-${randomBytes(6).toString('hex')}`;
      await admin.send(new CreateBucketCommand({ Bucket: bucket }));
      const store = new S3ObjectStore({ bucket, prefix: options.prefix, region: 'us-east-1', endpoint, forcePathStyle: true, credentials });
      stores.push(store);
      return store;
    },
    stop: async () => {
      for (const store of stores) store.close();
      admin.destroy();
      await stop();
    },
  };
}
