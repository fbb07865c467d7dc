/** `hearth realtime`, the real executable: where it listens, its probes and metrics, and SIGTERM. */
import type { ChildProcess } from 'node:child_process';
import { type Harness, startHarness } from '../support/harness';
import { TEST_REDIS_URL } from '../support/env';
import { call, signIn } from '../support/http';
import { freePort, spawnHearth } from '../cli/run-hearth';
import { Client } from './support';

let h: Harness;
let child: ChildProcess | null = null;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await h?.close();
});

/** Waits (bounded) until the child's stdout has a line matching. */
function lineMatching(proc: ChildProcess, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${seen}`)), timeoutMs);
    proc.stdout!.on('data', (chunk) => {
      seen += chunk;
      const line = seen.split('\n').find((l) => pattern.test(l));
      if (line) {
        clearTimeout(timer);
        resolve(line);
      }
    });
  });
}

test('serves the socket on REALTIME_PORT with probes and metrics, and closes sockets with 1012 (service restart) on SIGTERM', async () => {
  const [port, metricsPort] = [await freePort(), await freePort()];
  child = spawnHearth(['realtime'], {
    DATABASE_URL: h.database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: h.redisPrefix,
    HEARTH_MASTER_KEY: h.masterKey.toString('hex'),
    REALTIME_PORT: String(port),
    METRICS_PORT: String(metricsPort),
    LOG_LEVEL: 'debug',
    HEARTH_TRUSTED_PROXIES: 'loopback',
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdout!.on('data', (d) => (stdout += d));
  const listening = JSON.parse(await lineMatching(child, /realtime listening/));
  expect(listening.url).toBe(`ws://127.0.0.1:${port}/v1/realtime/socket`);
  expect(listening.metrics).toBe(`http://127.0.0.1:${metricsPort}/metrics`);

  const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
  expect(ready.status).toBe(200);
  expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

  // A change made through the API (another process) reaches a seat on this one.
  const t = await signIn(h.base, h.serverKeys['alpha-live-key'], 'command-1');
  // Through a proxy of ours (HEARTH_TRUSTED_PROXIES): the socket's log lines name the client behind it.
  const c = await Client.open(listening.url, { headers: { 'X-Forwarded-For': '203.0.113.77' } });
  c.send({ v: 1, type: 'authorize', payload: { token: t.accessToken } });
  expect((await c.next()).type).toBe('authorized');
  const made = await call(h.base, 'POST', '/sessions', { token: t.accessToken, body: { gameMode: 'g', map: 'm' } });
  expect(await c.next()).toEqual({ v: 1, type: 'session', payload: { session: made.body } });

  const metrics = await (await fetch(listening.metrics)).text();
  expect(metrics).toMatch(/hearth_realtime_connections\{state="authorized"\} 1\n/);
  expect(metrics).toMatch(/hearth_realtime_frames_out_total\{type="session"\} 1\n/);
  expect(metrics).toMatch(/process_resident_memory_bytes/);

  const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  expect(await c.waitClosed(5000)).toEqual({ code: 1012, reason: 'service-restart' });
  expect(await exited).toBe(0);
  expect(stderr).toBe('');
  const closedLine = stdout.split('\n').find((line) => line.includes('"socket closed"'));
  expect(closedLine && JSON.parse(closedLine)).toMatchObject({ address: '203.0.113.77', playerId: t.player.id, code: 1012 });
  await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
});
