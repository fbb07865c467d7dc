/**
 * `hearth dev`, what the README's first command runs: embedded PostgreSQL (no DATABASE_URL), the
 * in-process coordination (no REDIS_URL), the dev examples applied, the API and the socket on one
 * port; data, keys and tokens survive a restart.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import WebSocket from 'ws';
import { call, signIn } from '../support/http';
import { eventually } from '../support/wait';
import { startDev, stopDev as stop } from './doc-walk';
import { HEARTH_SOURCE_BIN, freePort, oneLine, runHearth, tempDir } from './run-hearth';

jest.setTimeout(240_000);

/** Whether something could listen on 127.0.0.1:`port` now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

test('runs on the embedded default, serves the README walk-through and the socket, and keeps its data across a restart', async () => {
  const [port, metricsPort, pgPort, storePort, oidcPort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  // A checkout of its own: the data folder is `.hearth` in it, as `make dev` makes it.
  const checkout = tempDir();
  const vars = {
    DATA_DIR: path.join(checkout, '.hearth'),
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    HEARTH_DEV_PG_PORT: String(pgPort),
    HEARTH_DEV_STORE_PORT: String(storePort),
    HEARTH_DEV_OIDC_PORT: String(oidcPort),
  };

  // The first start runs the source executable, as `make dev` does (every other command here runs the bundle).
  const first = await startDev(vars, checkout, HEARTH_SOURCE_BIN);
  expect(first.base).toBe(`http://127.0.0.1:${port}/v1`);
  expect(first.appKey).toBe('demo-dev');
  // No Redis in dev: readiness does not claim one.
  const ready = await call(first.base.replace(/\/v1$/, ''), 'GET', '/readyz');
  expect(ready.body).toEqual({ status: 'ready', postgres: true, coordination: 'in-process' });

  // The README's walk-through: server key → tokens → /players/me → flags with If-None-Match → 304.
  const tokens = await signIn(first.base, first.serverKey, 'readme-player', 'Ada');
  const me = await call(first.base, 'GET', '/players/me', { token: tokens.accessToken });
  expect(me.status).toBe(200);
  expect(me.body.displayName).toBe('Ada');
  const flags = await call(first.base, 'GET', '/flags', { token: tokens.accessToken });
  expect(flags.status).toBe(200);
  expect(flags.body.items.map((f: { name: string }) => f.name)).toEqual(['new_shop', 'winter_event']);
  const notModified = await call(first.base, 'GET', '/flags', { token: tokens.accessToken, headers: { 'If-None-Match': flags.headers.get('etag')! } });
  expect(notModified.status).toBe(304);
  expect(notModified.text).toBe('');

  // The other commands, run in the checkout with no variables, use the running dev's database and say so.
  const listed = await runHearth(['keys', 'list', '--environment', 'demo-dev', '--json'], {}, 60_000, checkout);
  expect(listed.code).toBe(0);
  expect(JSON.parse(listed.stdout).keys.length).toBeGreaterThan(0);
  expect(oneLine(listed.stderr)).toBe(
    `hearth: using the database of \`hearth dev\` (.hearth/connection.json): postgres://hearth:***@127.0.0.1:${pgPort}/hearth; set DATABASE_URL to use another`,
  );

  // `hearth apply` in its own process, with no Redis between it and the server: the server answers
  // the new flag at once under a new ETag, and the old ETag is no longer current.
  const manifest = path.join(checkout, 'winter.yaml');
  writeFileSync(
    manifest,
    [
      'apiVersion: hearth.gg/v1alpha1',
      'kind: GameConfig',
      'metadata: { name: demo-dev, namespace: demo }',
      'spec:',
      '  environment: demo-dev',
      '  flags: [ { name: new_shop, enabled: true }, { name: winter_event, enabled: true } ]',
      '',
    ].join('\n'),
  );
  const applied = await runHearth(['apply', '-f', manifest], {}, 60_000, checkout);
  expect(applied.code).toBe(0);
  const changed = await call(first.base, 'GET', '/flags', { token: tokens.accessToken });
  expect(changed.body.items).toEqual([
    { name: 'new_shop', isEnabled: true },
    { name: 'winter_event', isEnabled: true },
  ]);
  expect(changed.headers.get('etag')).not.toBe(flags.headers.get('etag'));
  await eventually(
    async () =>
      (await call(first.base, 'GET', '/flags', { token: tokens.accessToken, headers: { 'If-None-Match': flags.headers.get('etag')! } })).status === 200,
    2_000,
  );

  // A second `hearth dev` (another data folder) on the same ports: one line naming each port's variable, nothing started.
  const { DATA_DIR: _dataDir, ...ports } = vars;
  const secondDev = await runHearth(['dev', '--data-dir', path.join(tempDir(), '.hearth')], ports, 60_000);
  expect(secondDev.code).toBe(1);
  expect(oneLine(secondDev.stderr)).toBe(
    `hearth: ports in use: ${port} (the API and its socket; set PORT to move it), ${metricsPort} (metrics; set METRICS_PORT to move it), ` +
      `${storePort} (the local store; set HEARTH_DEV_STORE_PORT to move it), ${oidcPort} (the local OpenID Connect provider; set HEARTH_DEV_OIDC_PORT to move it), ` +
      `${pgPort} (the embedded PostgreSQL; set HEARTH_DEV_PG_PORT to move it)`,
  );

  // The socket is on the same port, where GET /realtime says.
  const info = await call(first.base, 'GET', '/realtime', { token: tokens.accessToken });
  expect(info.body.url).toBe(`ws://127.0.0.1:${port}/v1/realtime/socket`);
  const authorized = await new Promise<unknown>((resolve, reject) => {
    const ws = new WebSocket(info.body.url);
    const timer = setTimeout(() => reject(new Error('no authorized frame in 10 s')), 10_000);
    ws.on('open', () => ws.send(JSON.stringify({ v: 1, type: 'authorize', payload: { token: tokens.accessToken } })));
    ws.on('message', (data) => {
      clearTimeout(timer);
      ws.close();
      resolve(JSON.parse(String(data)));
    });
    ws.on('error', reject);
  });
  expect(authorized).toMatchObject({ v: 1, type: 'authorized', payload: { playerId: tokens.player.id } });

  // Symbol files on the default object store (objects/ in the data folder): a URL asked of this
  // process is used after the restart (its token's key comes from the kept master key).
  const symbols = Buffer.from('MODULE windows x86_64 0123 Game.pdb\n');
  const symbolUpload = await call(first.base, 'POST', '/crash-symbols/uploads', {
    token: first.serverKey,
    body: { label: 'Game', version: '1.0', fileName: 'Game.sym', sizeBytes: symbols.length, sha256: createHash('sha256').update(symbols).digest('hex') },
  });
  expect(symbolUpload.status).toBe(200);
  expect(symbolUpload.body.url.startsWith(`http://127.0.0.1:${port}/v1/`)).toBe(true);

  // Its local store and provider are where connection.json says, beside the database.
  const connection = JSON.parse(readFileSync(path.join(vars.DATA_DIR, 'connection.json'), 'utf8'));
  expect(connection).toMatchObject({
    baseUrl: first.base,
    store: { url: `http://127.0.0.1:${storePort}` },
    provider: { issuer: `http://127.0.0.1:${oidcPort}` },
  });
  expect((await fetch(`${connection.provider.issuer}/.well-known/openid-configuration`)).status).toBe(200);

  expect(await stop(first.child)).toBe(0);
  // The local store and the provider (a process of its own) went with it: their ports are free.
  expect(await Promise.all([portIsFree(storePort), portIsFree(oidcPort)])).toEqual([true, true]);

  // Stopped, it takes its connection back: a command run in the checkout says so in one line, never a refused connection.
  expect(existsSync(path.join(vars.DATA_DIR, 'connection.json'))).toBe(false);
  const afterStop = await runHearth(['keys', 'list', '--environment', 'demo-dev'], {}, 60_000, checkout);
  expect(afterStop.code).toBe(1);
  expect(oneLine(afterStop.stderr)).toBe('hearth: hearth dev is not running (its data is in .hearth/); start it (make dev), or set DATABASE_URL');

  // Restarted on the same data: same key, same player, the old token still good (same master key).
  const second = await startDev(vars);
  try {
    expect(second.serverKey).toBe(first.serverKey);
    const again = await call(second.base, 'GET', '/players/me', { token: tokens.accessToken });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(tokens.player.id);
    const signedInAgain = await call(second.base, 'POST', '/auth/server', { token: second.serverKey, body: { subject: 'readme-player' } });
    expect(signedInAgain.status).toBe(200);
    const put = await fetch(symbolUpload.body.url, { method: 'PUT', headers: symbolUpload.body.headers, body: symbols });
    expect(put.status).toBe(200);
    const file = path.join(vars.DATA_DIR, 'objects', ...symbolUpload.body.key.split('/'));
    expect(existsSync(file) && readFileSync(file).equals(symbols)).toBe(true);
    const listed = await call(second.base, 'GET', '/crash-symbols/files', { token: second.serverKey });
    expect(listed.body.items).toEqual([{ label: 'Game', version: '1.0', name: 'Game.sym', sizeBytes: symbols.length, updatedAt: expect.any(String) }]);
  } finally {
    expect(await stop(second.child)).toBe(0);
  }
});
