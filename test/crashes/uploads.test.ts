/**
 * POST /crash-reports/:appKey (spec §4 Crash reports, §8): the body streamed into object storage
 * (the bytes kept are the bytes sent), the upload recorded and its job queued in one transaction,
 * and every refusal keeping nothing: no object, no row, no job.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { CRASH_QUEUE_DEPTH_SQL, CRASH_QUEUE_SCHEMA, CRASH_UPLOAD_QUEUE, CRASH_UPLOADS_PER_ADDRESS, CRASH_UPLOADS_PER_ENVIRONMENT } from '@hearth/core/crashes';
import { DiskObjectStore } from '@hearth/core/storage';
import { parseTrustedProxies } from '@hearth/core/net';
import { type Harness, startApiInstance, startHarness, type ApiInstance } from '../support/harness';
import { call, expectError, type Reply } from '../support/http';
import { chunked, endless, openConnection, rawRequest } from '../support/raw-http';
import { environment, project, projectWithout, standardManifests } from '../support/manifests';
import { WindowClock } from '../support/clock';
import { eventually } from '../support/wait';

jest.setTimeout(120_000);

const MB = 1024 * 1024;
const LIMIT = 20 * MB;
const REPORTER_QUERY = 'AppID=CrashReporter&AppVersion=5.4.1-1234%2B%2BUE5&AppEnvironment=Release&UploadType=crashreports&UserID=login-1%7Cepic-2%7Cos-3';

/** The API's clock: the upload limits count per clock window (ten minutes, an hour). */
const clock = new WindowClock();
let h: Harness;
let folder: string;
const alpha = { id: 0 };

beforeAll(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'hearth-crash-uploads-'));
  h = await startHarness({
    clock,
    objectStore: new DiskObjectStore(folder),
    trustedProxies: parseTrustedProxies('loopback'),
    manifests: [...standardManifests(), ...projectWithout('nocrash', 'crashes'), project('busy'), environment('busy-live', 'busy')],
  });
  alpha.id = Number((await h.db('environments').where({ app_key: 'alpha-live' }).first('id')).id);
});
afterAll(async () => {
  await h.close();
  await rm(folder, { recursive: true, force: true });
});

/** A request from `address` (the API trusts X-Forwarded-For from loopback here). */
function upload(
  appKey: string,
  body: Buffer | undefined,
  options: { address?: string; query?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const query = options.query ?? REPORTER_QUERY;
  return call(h.base, 'POST', `/crash-reports/${appKey}${query ? `?${query}` : ''}`, {
    rawBody: body,
    headers: { 'Content-Type': 'application/octet-stream', 'X-Forwarded-For': options.address ?? '198.51.100.1', ...options.headers },
  });
}

interface UploadRow {
  id: string;
  environment_id: string;
  storage_key: string;
  size_bytes: string;
  sha256: string;
  app_id: string | null;
  app_version: string | null;
  app_environment: string | null;
  upload_type: string | null;
  user_id: string | null;
  client_address: string;
  state: string;
}

const rows = async (): Promise<UploadRow[]> => h.db('crash_uploads').orderBy('seq').select('*');
const jobs = async (): Promise<{ uploadId: string }[]> =>
  (await h.db.raw(`SELECT data FROM ${CRASH_QUEUE_SCHEMA}.job WHERE name = ? ORDER BY created_on`, [CRASH_UPLOAD_QUEUE])).rows.map(
    (r: { data: { uploadId: string } }) => r.data,
  );

/** Every file under the storage folder, temporary ones included (relative paths). */
async function storedFiles(root = folder): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name)))
    .sort();
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** What is kept, for "nothing changed" checks. */
async function kept() {
  return { rows: (await rows()).map((r) => r.id), jobs: (await jobs()).map((j) => j.uploadId), files: await storedFiles() };
}

async function metric(name: string, labels = ''): Promise<number> {
  const text = await (await fetch(h.api.metricsUrl!)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name} `)));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('an accepted upload', () => {
  test('20 MB exactly: the bytes kept are the bytes sent, the row records the upload (queued) and its job is queued', async () => {
    const before = { accepted: await metric('hearth_crash_uploads_accepted_total'), bytes: await metric('hearth_crash_upload_bytes_total') };
    const body = randomBytes(LIMIT);
    const reply = await upload('alpha-live', body, { address: '198.51.100.10' });
    expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: { received: true } });
    expect(reply.contract).toEqual({ checked: true, operationId: 'uploadCrashReport' });
    expect(Number(reply.headers.get('x-ratelimit-remaining'))).toBe(CRASH_UPLOADS_PER_ADDRESS.limit - 1);

    const [row] = await rows();
    expect(row).toEqual(
      expect.objectContaining({
        environment_id: String(alpha.id),
        storage_key: `crash-uploads/${alpha.id}/${row.id}.zlib`,
        size_bytes: String(LIMIT),
        sha256: createHash('sha256').update(body).digest('hex'),
        app_id: 'CrashReporter',
        app_version: '5.4.1-1234++UE5',
        app_environment: 'Release',
        upload_type: 'crashreports',
        user_id: 'login-1|epic-2|os-3',
        client_address: '198.51.100.10',
        state: 'queued',
      }),
    );
    expect((await readAll(await h.core.objectStore!.get(row.storage_key))).equals(body)).toBe(true);
    expect(await jobs()).toEqual([{ uploadId: row.id }]);
    // The queue depth the chart's KEDA scaler reads counts it.
    expect(Number((await h.db.raw(CRASH_QUEUE_DEPTH_SQL)).rows[0].count)).toBe(1);
    expect(await metric('hearth_crash_uploads_accepted_total')).toBe(before.accepted + 1);
    expect(await metric('hearth_crash_upload_bytes_total')).toBe(before.bytes + LIMIT);
  });

  test('a chunked body (no Content-Length) is streamed and kept whole; the reporter parameters are optional and cut to 256 characters', async () => {
    const body = randomBytes(300 * 1024).toString('base64');
    const reply = await rawRequest(
      h.base,
      'POST',
      `/crash-reports/alpha-live?UserID=${'u'.repeat(2000)}`,
      { 'Content-Type': 'application/octet-stream', 'X-Forwarded-For': '198.51.100.11' },
      chunked(body, 8),
    );
    expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: { received: true } });
    const row = (await rows()).at(-1)!;
    expect(row).toEqual(expect.objectContaining({ user_id: 'u'.repeat(256), app_id: null, app_version: null, size_bytes: String(Buffer.byteLength(body)) }));
    expect((await readAll(await h.core.objectStore!.get(row.storage_key))).toString()).toBe(body);
    expect((await jobs()).at(-1)).toEqual({ uploadId: row.id });
  });
});

test('the body reaches storage while it is still arriving (streamed, not gathered first)', async () => {
  const url = new URL(`${h.base}/crash-reports/alpha-live`);
  const total = 16 * MB;
  const req = http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': total, 'X-Forwarded-For': '198.51.100.40' },
  });
  const answered = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
  });
  const half = randomBytes(total / 2);
  req.write(half);
  // With half the body sent and the rest held back, most of that half is already in a temporary file.
  const partialBytes = async () => {
    const entries = await readdir(folder, { recursive: true, withFileTypes: true });
    const partial = entries.find((e) => e.isFile() && e.name.includes('.partial-'));
    if (!partial) return 0;
    return (await stat(path.join(partial.parentPath ?? (partial as unknown as { path: string }).path, partial.name))).size;
  };
  await eventually(async () => (await partialBytes()) >= total / 2 - MB, 10_000);
  req.end(randomBytes(total / 2));
  expect(await answered).toBe(200);
});

describe('refusals keep nothing', () => {
  let before: Awaited<ReturnType<typeof kept>>;
  beforeEach(async () => {
    before = await kept();
  });
  afterEach(async () => {
    expect(await kept()).toEqual(before);
  });

  test('an empty body is invalid-request: none, a declared length of 0, and a chunked body that ends at once', async () => {
    expectError(await upload('alpha-live', undefined), 400, 'invalid-request', 'body');
    expectError(await upload('alpha-live', Buffer.alloc(0)), 400, 'invalid-request', 'body');
    const reply = await rawRequest(
      h.base,
      'POST',
      '/crash-reports/alpha-live',
      { 'Content-Type': 'application/octet-stream', 'Transfer-Encoding': 'chunked' },
      async (req) => {
        req.end();
      },
    );
    expectError(reply, 400, 'invalid-request', 'body');
  });

  test('a declared length past 20 MB is 413 before a byte is read', async () => {
    const refused = await metric('hearth_http_refusals_total', '{route="/crash-reports/:appKey",error="payload-too-large"}');
    // Declares 20 MB + 1 and sends 10 bytes: only a server refusing on the header answers.
    const reply = await rawRequest(
      h.base,
      'POST',
      '/crash-reports/alpha-live',
      { 'Content-Type': 'application/octet-stream', 'Content-Length': LIMIT + 1 },
      async (req) => {
        req.write('0123456789');
      },
    );
    expect(expectError(reply, 413, 'payload-too-large').details).toEqual({ limit: LIMIT });
    expect(await metric('hearth_http_refusals_total', '{route="/crash-reports/:appKey",error="payload-too-large"}')).toBe(refused + 1);
  });

  test('a chunked body past 20 MB is refused while it streams; the partial object is removed', async () => {
    const sent = { bytes: 0 };
    const reply = await rawRequest(
      h.base,
      'POST',
      '/crash-reports/alpha-live',
      { 'Content-Type': 'application/octet-stream' },
      endless(256 * 1024, 60 * MB, sent),
    );
    expect(expectError(reply, 413, 'payload-too-large').details).toEqual({ limit: LIMIT });
    expect(sent.bytes).toBeGreaterThan(LIMIT);
    expect(sent.bytes).toBeLessThan(60 * MB);
  });

  test('past 20 MB the rest of the body is read and dropped: the same connection serves the next request once the client ends it', async () => {
    const conn = openConnection(h.base);
    const host = new URL(h.base).host;
    const piece = `${(1024 * 1024).toString(16)}\r\n${'x'.repeat(1024 * 1024)}\r\n`;
    conn.socket.write(
      `POST /v1/crash-reports/alpha-live HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    for (let sent = 0; sent <= LIMIT; sent += 1024 * 1024) conn.socket.write(piece);
    await eventually(async () => conn.seen.text.includes('"payload-too-large"'), 10_000);
    conn.socket.write(`0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    await eventually(async () => conn.answers().length === 2 && conn.seen.text.includes('"ok"'), 5_000);
    expect(conn.answers().map((a) => a.slice(0, 3))).toEqual(['413', '200']);
    conn.socket.destroy();
  });

  test('a body cut off mid-stream keeps nothing', async () => {
    await new Promise<void>((resolve) => {
      const url = new URL(`${h.base}/crash-reports/alpha-live`);
      const req = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': 4 * MB },
      });
      req.on('error', () => resolve());
      req.write(randomBytes(MB), () => setTimeout(() => req.destroy(), 100));
      req.on('close', () => resolve());
    });
    // The server notices the close and removes the temporary file.
    await eventually(async () => (await storedFiles()).length === before.files.length, 5000);
  });

  test('no such environment, or crash reports switched off: service-disabled; a project awaiting review: project-not-approved', async () => {
    expectError(await upload('no-such-app', Buffer.from('crash')), 403, 'service-disabled');
    expectError(await upload('nocrash-live', Buffer.from('crash')), 403, 'service-disabled');
    expectError(await upload('pending-live', Buffer.from('crash')), 403, 'project-not-approved');
  });

  test('an unknown query parameter, or one no reporter sends that long, is invalid-request', async () => {
    expectError(await upload('alpha-live', Buffer.from('crash'), { query: 'Other=1' }), 400, 'invalid-request', 'query.Other');
    expectError(await upload('alpha-live', Buffer.from('crash'), { query: `AppVersion=${'9'.repeat(2049)}` }), 400, 'invalid-request', 'query.AppVersion');
  });
});

describe('rate limits (spec §8)', () => {
  test('the 11th upload in 10 minutes from one address to one environment is 429 with Retry-After and counts nothing; other addresses and environments go on', async () => {
    clock.roomInWindow(CRASH_UPLOADS_PER_ADDRESS.windowSeconds, 30); // counts must not cross windows
    const address = '198.51.100.20';
    for (let i = 0; i < CRASH_UPLOADS_PER_ADDRESS.limit; i++) expect((await upload('busy-live', Buffer.from(`crash ${i}`), { address })).status).toBe(200);
    const before = await kept();
    const refused = await upload('busy-live', Buffer.from('one too many'), { address });
    const details = expectError(refused, 429, 'rate-limited').details;
    expect(Number(refused.headers.get('retry-after'))).toBe(details.retryAfterSeconds);
    expect(details.retryAfterSeconds).toBeGreaterThan(0);
    expect(details.retryAfterSeconds).toBeLessThanOrEqual(CRASH_UPLOADS_PER_ADDRESS.windowSeconds);
    expect(refused.headers.get('x-ratelimit-limit')).toBe(String(CRASH_UPLOADS_PER_ADDRESS.limit));
    expect(await kept()).toEqual(before);
    // Refused again: a refused upload is not counted, so the environment's hour still has room for others.
    expect((await upload('busy-live', Buffer.from('again'), { address })).status).toBe(429);
    expect((await upload('busy-live', Buffer.from('other address'), { address: '198.51.100.21' })).status).toBe(200);
    expect((await upload('alpha-live', Buffer.from('other environment'), { address })).status).toBe(200);
  });

  test('past 600 uploads in the hour to one environment, from everybody together, the next is 429', async () => {
    clock.roomInWindow(CRASH_UPLOADS_PER_ENVIRONMENT.windowSeconds, 60);
    await h.apply([project('hour'), environment('hour-live', 'hour')]);
    // 600 uploads from 60 addresses, 10 each: no address passes its own limit.
    const addresses = Array.from({ length: CRASH_UPLOADS_PER_ENVIRONMENT.limit / CRASH_UPLOADS_PER_ADDRESS.limit }, (_, i) => `203.0.113.${i + 1}`);
    const statuses = await Promise.all(
      addresses.map(async (address) => {
        const out: number[] = [];
        for (let i = 0; i < CRASH_UPLOADS_PER_ADDRESS.limit; i++) out.push((await upload('hour-live', Buffer.from('c'), { address })).status);
        return out;
      }),
    );
    expect(statuses.flat().filter((s) => s !== 200)).toEqual([]);
    const refused = await upload('hour-live', Buffer.from('c'), { address: '203.0.113.250' });
    expectError(refused, 429, 'rate-limited');
    expect(refused.headers.get('x-ratelimit-limit')).toBe(String(CRASH_UPLOADS_PER_ENVIRONMENT.limit));
    const hourId = Number((await h.db('environments').where({ app_key: 'hour-live' }).first('id')).id);
    expect(Number((await h.db('crash_uploads').where({ environment_id: hourId }).count('* as n'))[0].n)).toBe(CRASH_UPLOADS_PER_ENVIRONMENT.limit);
  });
});

describe('storage and queue failures: 503 unavailable, nothing half kept', () => {
  let other: ApiInstance | undefined;
  afterEach(async () => {
    await other?.stop();
    other = undefined;
  });

  async function apiWith(objectStore: DiskObjectStore | undefined): Promise<ApiInstance> {
    return (other = await startApiInstance({ db: h.db, redisPrefix: h.redisPrefix, masterKey: h.masterKey, objectStore }));
  }

  const post = (base: string, body: Buffer) =>
    call(base, 'POST', '/crash-reports/alpha-live', { rawBody: body, headers: { 'Content-Type': 'application/octet-stream' } });

  test('a process without object storage answers 503', async () => {
    const before = await kept();
    const api = await apiWith(undefined);
    expectError(await post(api.base, Buffer.from('crash')), 503, 'unavailable');
    expect(await kept()).toEqual(before);
  });

  test('storage that cannot be written (its folder is a file): 503, no row, no job', async () => {
    const before = await kept();
    const notAFolder = path.join(folder, '..', `not-a-folder-${randomBytes(4).toString('hex')}`);
    await writeFile(notAFolder, 'a file where the storage folder should be');
    try {
      const api = await apiWith(new DiskObjectStore(notAFolder));
      expectError(await post(api.base, randomBytes(64 * 1024)), 503, 'unavailable');
      expect(await kept()).toEqual(before);
    } finally {
      await rm(notAFolder, { force: true });
    }
  });

  test('a queue that cannot take the job: 503, the row rolled back and the stored object removed', async () => {
    const before = await kept();
    await h.db.raw(`ALTER TABLE ${CRASH_QUEUE_SCHEMA}.job RENAME TO job_away`);
    try {
      expectError(await upload('alpha-live', randomBytes(64 * 1024), { address: '198.51.100.30' }), 503, 'unavailable');
    } finally {
      await h.db.raw(`ALTER TABLE ${CRASH_QUEUE_SCHEMA}.job_away RENAME TO job`);
    }
    expect(await kept()).toEqual(before);
    // And with the queue back, uploads are kept again.
    expect((await upload('alpha-live', Buffer.from('crash'), { address: '198.51.100.30' })).status).toBe(200);
  });
});
