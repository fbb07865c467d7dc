/**
 * Symbol files (spec §4 Crash reports, §8): POST /crash-symbols/uploads and GET
 * /crash-symbols/files, on both stores: S3 (a real S3 server, versitygw, which itself refuses a PUT of another
 * size or digest, without the checksum header, or after expiry) and the folder on disk (whose PUT
 * URL the API serves, with the same refusals). A refused upload is never listed.
 */
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { ObjectStore } from '@hearth/core/storage';
import { type Harness, startApiInstance, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { type S3Gateway, startS3Gateway } from '../support/s3-gateway';

jest.setTimeout(120_000);

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A PUT with exactly these headers (node's http, so Content-Length is what we say). */
function rawPut(url: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

type Setup = { store?: ObjectStore; stop(): Promise<void> };
const STORES: [string, () => Promise<Setup>][] = [
  ['the folder on disk (the API serves the PUT)', async () => ({ stop: async () => undefined })],
  [
    'S3 (the S3 server refuses)',
    async () => {
      const s3: S3Gateway = await startS3Gateway();
      return { store: await s3.newStore(), stop: () => s3.stop() };
    },
  ],
];

describe.each(STORES)('symbol files on %s', (kind, setUp) => {
  let setup: Setup;
  let h: Harness;
  let key: string;
  let envId: number;

  beforeAll(async () => {
    setup = await setUp();
    h = await startHarness({ objectStore: setup.store });
    key = h.serverKeys['alpha-live-key'];
    envId = Number((await h.db('environments').where({ app_key: 'alpha-live' }).first('id')).id);
  });
  afterAll(async () => {
    await h?.close();
    await setup?.stop();
  });

  const store = () => h.core.objectStore!;
  const request = (body: Record<string, unknown>, token = key) => call(h.base, 'POST', '/crash-symbols/uploads', { token, body });
  const list = (query = '', token = key) => call(h.base, 'GET', `/crash-symbols/files${query}`, { token });
  const names = async (query = '') =>
    ((await list(query)).body.items as { label: string; version: string; name: string }[]).map((f) => `${f.label}/${f.version}/${f.name}`);
  const fileOf = (bytes: Buffer, label = 'Game', version = '1.0.0', fileName = 'Game.pdb') => ({
    label,
    version,
    fileName,
    sizeBytes: bytes.length,
    sha256: sha(bytes),
  });

  /** Asks for a URL and sends `bytes` to it with the headers given. */
  async function upload(bytes: Buffer, label = 'Game', version = '1.0.0', fileName = 'Game.pdb') {
    const asked = await request(fileOf(bytes, label, version, fileName));
    expect(asked.status).toBe(200);
    const put = await rawPut(asked.body.url, asked.body.headers, bytes);
    expect(put.status).toBe(200);
    return asked.body;
  }

  test('the URL pins size and digest for an hour; the bytes land and the file is listed', async () => {
    const bytes = randomBytes(5000);
    const before = Date.now();
    const asked = await request(fileOf(bytes, 'Game-Win64*Shipping', '1.0.0+cl.42', 'Game.pdb'));
    expect(asked.status).toBe(200);
    expect(Object.keys(asked.body).sort()).toEqual(['expiresAt', 'headers', 'key', 'url']);
    expect(asked.body.key).toBe(`symbols/${envId}/Game-Win64*Shipping/1.0.0+cl.42/Game.pdb`);
    expect(asked.body.headers).toEqual({ 'Content-Length': '5000', 'x-amz-checksum-sha256': Buffer.from(sha(bytes), 'hex').toString('base64') });
    const expires = Date.parse(asked.body.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000);
    // On disk the URL is the API's own, at the host the request named.
    if (!setup.store) expect(asked.body.url.startsWith(`${h.base}/object-uploads/`)).toBe(true);

    expect(await names()).not.toContain('Game-Win64*Shipping/1.0.0+cl.42/Game.pdb'); // not before the upload
    const put = await rawPut(asked.body.url, asked.body.headers, bytes);
    expect(put.status).toBe(200);
    expect(await readAll(await store().get(asked.body.key))).toEqual(bytes);

    const listed = await list('?label=Game-Win64*Shipping');
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([
      { label: 'Game-Win64*Shipping', version: '1.0.0+cl.42', name: 'Game.pdb', sizeBytes: 5000, updatedAt: expect.any(String) },
    ]);
    expect(Date.parse(listed.body.items[0].updatedAt)).toBeGreaterThanOrEqual(before - 1000);
  });

  describe('refused by the storage, and never listed', () => {
    const label = 'Refused';

    /**
     * What refuses: the S3 server with its status and S3 error code; the API's disk PUT with its status and
     * the spec's error code (403 where S3 finds the signature broken, 400 for a body of another digest).
     */
    type Refusal = { s3: [number, string]; disk: [number, string] };

    function expectRefusal(refused: { status: number; text: string }, expected: Refusal) {
      if (setup.store) {
        const code = /<Code>([^<]+)<\/Code>/.exec(refused.text)?.[1];
        expect({ kind, status: refused.status, code }).toEqual({ kind, status: expected.s3[0], code: expected.s3[1] });
      } else {
        expect({ kind, status: refused.status, code: JSON.parse(refused.text).error }).toEqual({ kind, status: expected.disk[0], code: expected.disk[1] });
      }
    }

    async function expectRefusedAndUnlisted(
      version: string,
      expected: Refusal,
      send: (asked: { url: string; headers: Record<string, string> }, bytes: Buffer) => Promise<{ status: number; text: string }>,
    ) {
      const bytes = randomBytes(4096);
      const asked = await request(fileOf(bytes, label, version, 'Game.sym'));
      expect(asked.status).toBe(200);
      expectRefusal(await send(asked.body, bytes), expected);
      expect(await store().head(asked.body.key)).toBeNull();
      expect(await names(`?label=${label}`)).toEqual([]);
    }

    test('a body of another size (Content-Length is signed)', async () => {
      await expectRefusedAndUnlisted('size', { s3: [403, 'SignatureDoesNotMatch'], disk: [403, 'forbidden'] }, (asked, bytes) => {
        const other = Buffer.concat([bytes, Buffer.from('x')]);
        return rawPut(asked.url, { ...asked.headers, 'Content-Length': String(other.length) }, other);
      });
    });

    test('another digest: the same length, other bytes (the body is hashed)', async () => {
      await expectRefusedAndUnlisted('digest', { s3: [400, 'BadDigest'], disk: [400, 'invalid-request'] }, (asked, bytes) => {
        const other = Buffer.from(bytes);
        other[100] ^= 0xff;
        return rawPut(asked.url, asked.headers, other);
      });
    });

    test('the checksum header left out (it is signed)', async () => {
      // A signed header that is missing: the signature computed without it does not match.
      await expectRefusedAndUnlisted('no-checksum', { s3: [403, 'SignatureDoesNotMatch'], disk: [403, 'forbidden'] }, (asked, bytes) =>
        rawPut(asked.url, { 'Content-Length': asked.headers['Content-Length'] }, bytes),
      );
    });

    test('another checksum header with the bytes it names (it is signed)', async () => {
      await expectRefusedAndUnlisted('other-checksum', { s3: [403, 'SignatureDoesNotMatch'], disk: [403, 'forbidden'] }, (asked) => {
        const other = randomBytes(4096);
        return rawPut(asked.url, { ...asked.headers, 'x-amz-checksum-sha256': createHash('sha256').update(other).digest('base64') }, other);
      });
    });

    test('an expired URL', async () => {
      const bytes = randomBytes(2048);
      const asked = await request(fileOf(bytes, label, 'expired', 'Game.sym'));
      // The same upload, signed to expire in a second.
      const short = await store().presignPut(asked.body.key, {
        sizeBytes: bytes.length,
        sha256Hex: sha(bytes),
        expiresInSeconds: 1,
        apiOrigin: new URL(h.base).origin,
      });
      await new Promise((r) => setTimeout(r, 2100)); // wall time: the store checks the URL's expiry by its own clock
      expectRefusal(await rawPut(short.url, short.headers, bytes), { s3: [403, 'AccessDenied'], disk: [403, 'forbidden'] });
      expect(await store().head(asked.body.key)).toBeNull();
      expect(await names(`?label=${label}`)).toEqual([]);
    });
  });

  test('a new request for other content replaces the pending one and unlists the file until it lands', async () => {
    const first = randomBytes(1000);
    await upload(first, 'Replace', '1', 'a.pdb');
    expect(await names('?label=Replace')).toEqual(['Replace/1/a.pdb']);
    // The same content again keeps it listed.
    expect((await request(fileOf(first, 'Replace', '1', 'a.pdb'))).status).toBe(200);
    expect(await names('?label=Replace')).toEqual(['Replace/1/a.pdb']);
    // Other content: unlisted until its bytes land.
    const second = randomBytes(1200);
    const asked = await request(fileOf(second, 'Replace', '1', 'a.pdb'));
    expect(await names('?label=Replace')).toEqual([]);
    expect((await rawPut(asked.body.url, asked.body.headers, second)).status).toBe(200);
    const listed = await list('?label=Replace');
    expect(listed.body.items.map((f: { sizeBytes: number }) => f.sizeBytes)).toEqual([1200]);
  });

  test('pages ordered by label, version, name, with label and version filters and signed cursors', async () => {
    const files: [string, string, string][] = [
      ['Order', '2.0', 'b.pdb'],
      ['Order', '1.0', 'b.pdb'],
      ['Order', '1.0', 'a.pdb'],
      ['Order-Z', '1.0', 'a.pdb'],
      ['Order', '10.0', 'a.pdb'],
    ];
    for (const [label, version, name] of files) await upload(randomBytes(300), label, version, name);
    // Bytewise order: '1.0' < '10.0' < '2.0'.
    const all = ['Order/1.0/a.pdb', 'Order/1.0/b.pdb', 'Order/10.0/a.pdb', 'Order/2.0/b.pdb'];
    expect(await names('?label=Order')).toEqual(all);
    expect(await names('?label=Order&version=1.0')).toEqual(['Order/1.0/a.pdb', 'Order/1.0/b.pdb']);
    expect(await names('?label=Order-Z')).toEqual(['Order-Z/1.0/a.pdb']);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof list>> = await list(`?label=Order&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((f: { label: string; version: string; name: string }) => `${f.label}/${f.version}/${f.name}`));
      cursor = page.body.next;
    } while (cursor);
    expect(seen).toEqual(all);

    const first = await list('?label=Order&limit=1');
    expectError(await list(`?label=Order-Z&limit=1&cursor=${encodeURIComponent(first.body.next)}`), 400, 'invalid-request', 'query.cursor');
    expectError(
      await list(`?label=Order&limit=1&cursor=${encodeURIComponent(first.body.next)}`, h.serverKeys['alpha-test-key']),
      400,
      'invalid-request',
      'query.cursor',
    );
  });

  test("another environment's files are not listed", async () => {
    await upload(randomBytes(100), 'Tenancy', '1', 'x.pdb');
    const other = await list('?label=Tenancy', h.serverKeys['alpha-test-key']);
    expect(other.status).toBe(200);
    expect(other.body.items).toEqual([]);
  });
});

describe('symbol files: validation and the places without storage', () => {
  let h: Harness;
  let key: string;
  const good = { label: 'Game', version: '1.0', fileName: 'Game.pdb', sizeBytes: 10, sha256: 'a'.repeat(64) };

  beforeAll(async () => {
    h = await startHarness();
    key = h.serverKeys['alpha-live-key'];
  });
  afterAll(async () => h?.close());

  const request = (body: Record<string, unknown>) => call(h.base, 'POST', '/crash-symbols/uploads', { token: key, body });

  test('the limits themselves are taken', async () => {
    expect(
      (await request({ ...good, label: `${'L'.repeat(199)}*`, version: 'v'.repeat(64), fileName: `${'f'.repeat(199)}+`, sizeBytes: 4 * 1024 ** 3 })).status,
    ).toBe(200);
    expect((await request({ ...good, label: 'a.b_c-d+e*f', version: 'A.b_c-d+1', fileName: 'x.y_z-w+1', sizeBytes: 1 })).status).toBe(200);
  });

  test.each([
    ['label', { label: '' }],
    ['label', { label: 'L'.repeat(201) }],
    ['label', { label: 'a/b' }],
    ['label', { label: 'a b' }],
    ['label', { label: 'a..b' }],
    ['label', { label: '..' }],
    ['label', { label: '.' }],
    ['label', { label: 'é' }],
    ['version', { version: '' }],
    ['version', { version: 'v'.repeat(65) }],
    ['version', { version: '1*0' }],
    ['version', { version: '1..0' }],
    ['version', { version: '1/0' }],
    ['fileName', { fileName: '' }],
    ['fileName', { fileName: 'f'.repeat(201) }],
    ['fileName', { fileName: 'dir/Game.pdb' }],
    ['fileName', { fileName: 'dir\\Game.pdb' }],
    ['fileName', { fileName: 'Game*.pdb' }],
    ['fileName', { fileName: '..pdb' }],
    ['fileName', { fileName: '.' }],
    ['sizeBytes', { sizeBytes: 0 }],
    ['sizeBytes', { sizeBytes: -1 }],
    ['sizeBytes', { sizeBytes: 4 * 1024 ** 3 + 1 }],
    ['sizeBytes', { sizeBytes: 1.5 }],
    ['sizeBytes', { sizeBytes: '10' }],
    ['sha256', { sha256: 'A'.repeat(64) }],
    ['sha256', { sha256: 'a'.repeat(63) }],
    ['sha256', { sha256: 'a'.repeat(65) }],
    ['sha256', { sha256: 'g'.repeat(64) }],
  ])('%s %j is refused and nothing is recorded', async (field, change) => {
    const before = await h.db('symbol_files').count({ n: '*' }).first();
    expectError(await request({ ...good, ...change }), 400, 'invalid-request', `body.${field}`);
    expect(await h.db('symbol_files').count({ n: '*' }).first()).toEqual(before);
  });

  test.each(['label', 'version', 'fileName', 'sizeBytes', 'sha256'])('a body without %s is refused', async (field) => {
    const body: Record<string, unknown> = { ...good };
    delete body[field];
    expectError(await request(body), 400, 'invalid-request', `body.${field}`);
  });

  test('an unknown field is refused', async () => {
    expectError(await request({ ...good, contentType: 'x' }), 400, 'invalid-request', 'body.contentType');
  });

  test.each([
    ['label', 'a..b'],
    ['version', '1*0'],
  ])('the list refuses a %s filter outside the rules', async (field, value) => {
    expectError(
      await call(h.base, 'GET', `/crash-symbols/files?${field}=${encodeURIComponent(value)}`, { token: key }),
      400,
      'invalid-request',
      `query.${field}`,
    );
  });

  test('a player token is forbidden', async () => {
    const player = await signIn(h.base, key, 'symbols-player');
    expectError(await call(h.base, 'GET', '/crash-symbols/files', { token: player.accessToken }), 403, 'forbidden');
  });

  test('an API without object storage answers 503 unavailable on both routes', async () => {
    const bare = await startApiInstance({ db: h.db, redisPrefix: h.redisPrefix, masterKey: h.masterKey });
    try {
      expectError(await call(bare.base, 'POST', '/crash-symbols/uploads', { token: key, body: good }), 503, 'unavailable');
      expectError(await call(bare.base, 'GET', '/crash-symbols/files', { token: key }), 503, 'unavailable');
    } finally {
      await bare.stop();
    }
  });
});

describe("the disk store's PUT URL (served by the API)", () => {
  let h: Harness;
  let key: string;

  beforeAll(async () => {
    h = await startHarness();
    key = h.serverKeys['alpha-live-key'];
  });
  afterAll(async () => h?.close());

  const ask = async (bytes: Buffer, fileName: string) =>
    (
      await call(h.base, 'POST', '/crash-symbols/uploads', {
        token: key,
        body: { label: 'Disk', version: '1', fileName, sizeBytes: bytes.length, sha256: sha(bytes) },
      })
    ).body as {
      url: string;
      headers: Record<string, string>;
      key: string;
    };

  test('a token changed in any way is refused (403) and nothing is kept', async () => {
    const bytes = randomBytes(64);
    const asked = await ask(bytes, 'tampered.pdb');
    const url = new URL(asked.url);
    const token = url.pathname.split('/').pop()!;
    const [body, mac] = token.split('.');
    // A grant for a bigger size, under the old MAC.
    const forged = Buffer.from(
      JSON.stringify(JSON.parse(Buffer.from(body, 'base64url').toString()).map((v: unknown, i: number) => (i === 1 ? 65 : v))),
    ).toString('base64url');
    for (const changed of [`${forged}.${mac}`, `${body}.${mac.slice(0, -2)}AA`, body, 'x']) {
      const refused = await rawPut(`${url.origin}/v1/object-uploads/${changed}`, asked.headers, bytes);
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.text).error).toBe('forbidden');
    }
    expect(await h.core.objectStore!.head(asked.key)).toBeNull();
  });

  test('the URL of a request since replaced by other content is refused (403), the newer one lands', async () => {
    const old = randomBytes(64);
    const oldAsked = await ask(old, 'replaced.pdb');
    const newer = randomBytes(80);
    const newAsked = await ask(newer, 'replaced.pdb');
    expect((await rawPut(oldAsked.url, oldAsked.headers, old)).status).toBe(403);
    expect(await h.core.objectStore!.head(oldAsked.key)).toBeNull();
    expect((await rawPut(newAsked.url, newAsked.headers, newer)).status).toBe(200);
    expect((await h.core.objectStore!.head(newAsked.key))?.sizeBytes).toBe(80);
  });

  test('the upload answers carry X-RateLimit headers (counted by address)', async () => {
    const bytes = randomBytes(10);
    const asked = await ask(bytes, 'limits.pdb');
    const answer = await fetch(asked.url, { method: 'PUT', headers: { 'x-amz-checksum-sha256': asked.headers['x-amz-checksum-sha256'] }, body: bytes });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-ratelimit-limit')).not.toBeNull();
    // GET on an upload URL is no route.
    expect((await fetch(asked.url)).status).toBe(404);
  });
});

describe('completing S3 uploads: the list looks for pending uploads with HeadObject', () => {
  let s3: S3Gateway;
  let h: Harness;
  let key: string;

  beforeAll(async () => {
    s3 = await startS3Gateway();
    h = await startHarness({ objectStore: await s3.newStore() });
    key = h.serverKeys['alpha-live-key'];
  });
  afterAll(async () => {
    await h?.close();
    await s3?.stop();
  });

  const ask = async (bytes: Buffer, label: string, fileName: string) => {
    const asked = await call(h.base, 'POST', '/crash-symbols/uploads', {
      token: key,
      body: { label, version: '1', fileName, sizeBytes: bytes.length, sha256: sha(bytes) },
    });
    expect(asked.status).toBe(200);
    return asked.body as { url: string; headers: Record<string, string>; key: string };
  };
  const listed = async (label: string) =>
    ((await call(h.base, 'GET', `/crash-symbols/files?label=${label}&limit=200`, { token: key })).body.items as { name: string }[]).map((f) => f.name);

  test('in batches of 20, the least recently looked-at first: uploads behind 20 that never land are found by the next list', async () => {
    // 20 requests whose files never come, then 5 that land.
    for (let i = 0; i < 20; i++) await ask(randomBytes(100), 'Batch', `never${String(i).padStart(2, '0')}.pdb`);
    const landed = Array.from({ length: 5 }, (_, i) => `f${i}.pdb`);
    for (const name of landed) {
      const bytes = randomBytes(200);
      const asked = await ask(bytes, 'Batch', name);
      expect((await rawPut(asked.url, asked.headers, bytes)).status).toBe(200);
    }
    // The first list looks at the 20 never looked at (the oldest); the next at the 5 behind them.
    expect(await listed('Batch')).toEqual([]);
    expect(await listed('Batch')).toEqual(landed);
  });

  test('a pending upload whose URL expired more than an hour ago is no longer looked for; a new request revives it', async () => {
    const bytes = randomBytes(500);
    const asked = await ask(bytes, 'Late', 'late.pdb');
    await h
      .db('symbol_files')
      .where({ label: 'Late' })
      .update({ expires_at: h.db.raw("now() - interval '61 minutes'") });
    // The bytes land anyway (a URL signed now, as if the old one had still been good).
    const put = await h.core.objectStore!.presignPut(asked.key, { sizeBytes: bytes.length, sha256Hex: sha(bytes), expiresInSeconds: 60, apiOrigin: '' });
    expect((await rawPut(put.url, put.headers, bytes)).status).toBe(200);
    expect(await listed('Late')).toEqual([]);
    await ask(bytes, 'Late', 'late.pdb');
    expect(await listed('Late')).toEqual(['late.pdb']);
  });

  test('an object of other content under the key does not complete the request', async () => {
    const old = randomBytes(300);
    const first = await ask(old, 'Other', 'o.pdb');
    expect((await rawPut(first.url, first.headers, old)).status).toBe(200);
    expect(await listed('Other')).toEqual(['o.pdb']);
    // Asked for new content; the stored object is still the old one.
    await ask(randomBytes(300), 'Other', 'o.pdb');
    expect(await listed('Other')).toEqual([]);
    expect(await listed('Other')).toEqual([]);
  });
});
