/**
 * A real MinIO server for the object-storage tests: it checks presigned signatures, signed headers,
 * expiry and x-amz-checksum-sha256 against the body, which is what the symbol uploads rely on.
 * Built once per machine by test/kube/tools/build.sh (`make minio`, part of `make test`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore } from '@hearth/core/storage';
import { freePort } from './ports';
import { stopProcess } from './processes';

export const MINIO_BIN = path.join(process.env.HEARTH_TOOLS_DIR ?? path.join(os.homedir(), '.cache/hearth/tools'), 'bin', 'minio');

export interface Minio {
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** A fresh bucket, and a store over it. */
  newStore(options?: { prefix?: string }): Promise<S3ObjectStore>;
  stop(): Promise<void>;
}

export async function startMinio(): Promise<Minio> {
  if (!existsSync(MINIO_BIN)) throw new Error(`no MinIO at ${MINIO_BIN}: run \`make minio\` (bash test/kube/tools/build.sh minio) once on this machine`);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-minio-'));
  const [port, consolePort] = [await freePort(), await freePort()];
  const credentials = { accessKeyId: 'hearth-test', secretAccessKey: randomBytes(18).toString('hex') };
  const child: ChildProcess = spawn(
    MINIO_BIN,
    ['server', dataDir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'],
    {
      env: {
        PATH: process.env.PATH,
        HOME: dataDir,
        MINIO_ROOT_USER: credentials.accessKeyId,
        MINIO_ROOT_PASSWORD: credentials.secretAccessKey,
        MINIO_BROWSER: 'off',
        MINIO_UPDATE: 'off',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const endpoint = `http://127.0.0.1:${port}`;

  const stop = async () => {
    await stopProcess(child, 10_000);
    await rm(dataDir, { recursive: true, force: true });
  };

  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`MinIO exited (${child.exitCode}): ${stderr}`);
      const ready = await fetch(`${endpoint}/minio/health/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`MinIO was not ready within 60 s: ${stderr}`);
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
