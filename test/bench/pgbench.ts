/**
 * pgbench running the saves write's own statement (SAVE_WRITE_SQL, the one statement PUT
 * /players/:playerId/data/:key runs, by itself as its own transaction, as the API runs it) on the API's database, with as many clients as the
 * API's pool has connections: the ceiling the database gives that write, to compare the API's peak with.
 * Each client rewrites a slot of its own (key = its client id) with the same 1 KB value, at the version it last wrote.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SAVE_WRITE_SQL } from '@hearth/core';

export interface PgbenchFigures {
  clients: number;
  seconds: number;
  tps: number;
  latencyAverageMs: number;
  transactions: number;
  failed: number;
}

/** The statement with its `?` placeholders bound, in order, to pgbench variables. */
function bind(sql: string, names: string[]): string {
  let i = 0;
  const bound = sql.replace(/\?/g, () => `:${names[i++]}`);
  if (i !== names.length) throw new Error(`pgbench script: ${names.length} variables for ${i} placeholders`);
  return bound.replace(/\s*\n\s*/g, ' ');
}

export function saveWriteScript(): string {
  // Like the API's bench, each client sends the version it holds as expectedVersion: \gset keeps the
  // answer's columns as the client's variables, so :version is the slot's version after its last write
  // (0, from -D, before its first).
  return `${bind(SAVE_WRITE_SQL, ['env', 'player', 'client_id', 'size', 'data', 'version', 'player_limit', 'environment_limit'])} \\gset\n`;
}

export async function runPgbench(options: {
  databaseUrl: string;
  clients: number;
  seconds: number;
  variables: Record<string, string | number>;
  log: (line: string) => void;
}): Promise<PgbenchFigures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-pgbench-'));
  const script = path.join(dir, 'save-write.sql');
  fs.writeFileSync(script, saveWriteScript());
  // Extended protocol, as the API's driver sends its statements; one pgbench thread, like the one loader.
  const args = ['-n', '-M', 'extended', '-c', String(options.clients), '-j', '1', '-T', String(options.seconds), '-f', script,
    ...Object.entries(options.variables).flatMap(([k, v]) => ['-D', `${k}=${v}`]), options.databaseUrl];
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn('pgbench', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('error', (err) => reject(new Error(`pgbench could not start (${err.message}); .ci/services.sh installs it`)));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`pgbench exited with ${code}:\n${out}`))));
  });
  fs.rmSync(dir, { recursive: true, force: true });
  const read = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? NaN);
  const figures = {
    clients: options.clients,
    seconds: options.seconds,
    tps: read(/tps = ([\d.]+)/),
    latencyAverageMs: read(/latency average = ([\d.]+) ms/),
    transactions: read(/number of transactions actually processed: (\d+)/),
    failed: read(/number of failed transactions: (\d+)/) || 0,
  };
  if (!Number.isFinite(figures.tps) || figures.transactions === 0) throw new Error(`pgbench gave no figures:\n${output}`);
  if (figures.failed > 0) throw new Error(`pgbench: ${figures.failed} transactions failed:\n${output}`);
  options.log(`  pgbench, same transaction: ${Math.round(figures.tps)} tps with ${figures.clients} clients, latency average ${figures.latencyAverageMs} ms`);
  return figures;
}
