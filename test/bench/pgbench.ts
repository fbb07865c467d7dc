/**
 * pgbench running the saves write's own statement (SAVE_WRITE, the one statement PUT
 * /players/:playerId/data/:key runs, by itself as its own transaction, as the API runs it) on the API's database, with as many clients as the
 * API's pool has connections: the ceiling the database gives that write, to compare the API's peak with.
 * Each client rewrites a slot of its own (key = its client id) with the same 1 KB value, at the version it last wrote.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IDEMPOTENT_MOVE, engineRequest } from '@hearth/core/economy';
import { SAVE_WRITE } from '@hearth/core/saves';
import { pinned } from './child';

export interface PgbenchFigures {
  clients: number;
  seconds: number;
  tps: number;
  latencyAverageMs: number;
  transactions: number;
  failed: number;
  /** Cores of the machine busy while pgbench ran (pgbench, PostgreSQL and the rest), set by the runner. */
  machineCores?: number;
}

/**
 * The statement with its `?` placeholders bound, in order, to pgbench variables (`name`), or to a
 * literal where pgbench has no variable for it: `null` for SQL NULL (pgbench variables are never NULL;
 * the API's driver binds null there), `{ text }` for a string fixed per script (pgbench's \set makes
 * only numbers; used for one script's player and the move's request).
 */
function bind(sql: string, names: (string | null | { text: string } | { expression: string })[]): string {
  let i = 0;
  const bound = sql.replace(/\?/g, () => {
    const name = names[i++];
    if (name === null) return 'NULL';
    if (typeof name === 'object') return 'expression' in name ? name.expression : quoted(name.text);
    return `:${name}`;
  });
  if (i !== names.length) throw new Error(`pgbench script: ${names.length} variables for ${i} placeholders`);
  return bound.replace(/\s*\n\s*/g, ' ');
}

export function saveWriteScript(): string {
  // Like the API's bench, each client sends the version it holds as expectedVersion: \gset keeps the
  // answer's columns as the client's variables, so :version is the slot's version after its last write
  // (0, from -D, before its first).
  return `${bind(SAVE_WRITE.sql, ['env', 'player', 'client_id', 'size', 'data', 'version', 'player_limit', 'environment_limit'])} \\gset\n`;
}

/**
 * A currency credit as POST /players/:playerId/currencies/:currencyKey/credit runs it with an
 * Idempotency-Key (EconomyService.moveOnce): one statement, IDEMPOTENT_MOVE, by itself as its own
 * transaction (the record's claim, the move and the record's answer are in the engine's function).
 * Each transaction takes a new key. Variables (-D): env, scope, fingerprint, kind, max (2^53-1); the
 * player is this script's, and the request is the JSON the API sends for `body`.
 */
export function creditScript(player: { id: string }, body: { currencyKey: string; amount: number; reason: string }): string {
  return [
    '\\set key random(1, 1000000000000000)',
    `${bind(IDEMPOTENT_MOVE.sql, ['scope', 'key', 'fingerprint', 'env', { text: player.id }, 'kind', { text: engineRequest(body) }, 'max'])};`,
    '',
  ].join('\n');
}

/**
 * A skill-node unlock as POST /players/:playerId/skill-nodes/:nodeKey/unlock runs it with an
 * Idempotency-Key: IDEMPOTENT_MOVE by itself, kind `skill-node-unlock`, a new key per transaction and
 * a random one of the `nodes` bench nodes (benchNodeKey) of this script's player; its request is
 * the JSON the route sends (`{"nodeKey":…}`), made from the drawn number. Variables (-D): env,
 * scope, fingerprint, kind, max.
 */
export function unlockScript(player: { id: string }, nodes: number): string {
  // What the route sends the engine, `{"nodeKey":"bench.<n>"}`, with <n> drawn per transaction.
  const request = { expression: `(${quoted(`{"nodeKey":"${benchNodeKey(0).replace(/0$/, '')}`)} || :node || '"}')::jsonb` };
  return [
    '\\set key random(1, 1000000000000000)',
    `\\set node random(0, ${nodes - 1})`,
    `${bind(IDEMPOTENT_MOVE.sql, ['scope', 'key', 'fingerprint', 'env', { text: player.id }, 'kind', request, 'max'])};`,
    '',
  ].join('\n');
}

/** The bench's skill nodes: roots of BENCH_SKILL_NODES / 64 trees, each priced 1 gold (servers/hearth-api.ts). */
export const BENCH_SKILL_NODES = 1024;
export const benchNodeKey = (n: number) => `bench.${n}`;

/** The bench's products on sale (servers/hearth-api.ts): what GET /commerce/catalog answers. */
export const BENCH_PRODUCTS = 12;

/**
 * The database's ceiling for one hot counter, the environment stat increment's baseline: one
 * single-row increment per transaction (`UPDATE … SET value = value + 1` of the counter's row, which
 * must exist), each waiting on the row lock of the one before until it commits. Variables (-D): env.
 */
export function statIncrementScript(stat: { key: string }): string {
  return `UPDATE environment_stats SET value = value + 1 WHERE environment_id = :env AND key = ${quoted(stat.key)} AND realm_key = '';\n`;
}

/** A string literal of a pgbench script: pgbench reads `:name` as a variable even inside quotes, so such a colon is written \\072 in an E'' string. */
function quoted(text: string): string {
  return /:[A-Za-z0-9_]/.test(text) ? `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''").replace(/:/g, '\\072')}'` : `'${text.replace(/'/g, "''")}'`;
}

/**
 * The transaction a route ran, statement for statement, from the statements captured from the
 * server's driver (knex's `query` events: `$n` placeholders and their bindings). Each binding becomes
 * a literal, except those `swap` names: a value to put instead (`{ text }`) or a pgbench variable (a
 * name: the script's `\\set key` makes a new one per transaction). Several statements captured
 * outside a transaction block are wrapped in one, as the route's transaction wraps them; one
 * statement (a move of the money engine, in autocommit) runs by itself, as the route runs it.
 */
export function capturedScript(queries: { sql: string; bindings: unknown[] }[], swap: Record<string, string | { text: string }>): string {
  const literal = (value: unknown): string => {
    if (value === null || value === undefined) return 'NULL';
    if (typeof value === 'string' && Object.hasOwn(swap, value)) {
      const put = swap[value];
      return typeof put === 'string' ? `:${put}` : quoted(put.text);
    }
    return quoted(value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : String(value));
  };
  const statements = queries.map(({ sql, bindings }) =>
    sql
      .replace(/\$(\d+)/g, (_, n: string) => literal(bindings[Number(n) - 1]))
      .replace(/\s*\n\s*/g, ' ')
      .replace(/;?\s*$/, ';'),
  );
  const wrapped = statements.length === 1 || /^BEGIN/i.test(statements[0] ?? '') ? statements : ['BEGIN;', ...statements, 'COMMIT;'];
  return ['\\set key random(1, 1000000000000000)', ...wrapped, ''].join('\n');
}

export async function runPgbench(options: {
  databaseUrl: string;
  clients: number;
  seconds: number;
  /** The scripts, each chosen with equal weight per transaction; the saves write's when absent. */
  scripts?: { name: string; text: string }[];
  variables: Record<string, string | number>;
  /**
   * As the API's driver sends the statements: `prepared` for the one-statement writes the API runs as
   * named prepared statements (runStatement), `extended` (unnamed statements) for those it sends
   * through knex (the captured purchase).
   */
  protocol: 'prepared' | 'extended';
  log: (line: string) => void;
}): Promise<PgbenchFigures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-pgbench-'));
  const scripts = options.scripts ?? [{ name: 'save-write', text: saveWriteScript() }];
  if (scripts.length > 128) throw new Error('pgbench takes at most 128 scripts');
  const files = scripts.flatMap(({ name, text }) => {
    const file = path.join(dir, `${name}.sql`);
    fs.writeFileSync(file, text);
    return ['-f', file];
  });
  // One pgbench thread, like the one loader.
  const args = [
    '-n',
    '-M',
    options.protocol,
    '-c',
    String(options.clients),
    '-j',
    '1',
    '-T',
    String(options.seconds),
    ...files,
    ...Object.entries(options.variables).flatMap(([k, v]) => ['-D', `${k}=${v}`]),
    options.databaseUrl,
  ];
  const output = await new Promise<string>((resolve, reject) => {
    // pgbench is the database's other client: on the cores of the API's side (child.ts, database-apart).
    const child = spawn(...pinned('client', 'database-apart', 'pgbench', args), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('error', (err) => reject(new Error(`pgbench could not start (${err.message}); .ci/services.sh installs it`)));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`pgbench exited with ${code} (its scripts are kept in ${dir}):\n${out}`))));
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
  options.log(`  pgbench (its baseline): ${Math.round(figures.tps)} tps with ${figures.clients} clients, latency average ${figures.latencyAverageMs} ms`);
  return figures;
}
