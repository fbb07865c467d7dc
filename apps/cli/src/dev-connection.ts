/**
 * How the other commands find a running `hearth dev`: it writes its embedded database's address to
 * `connection.json` in its data folder (mode 0600, beside master.key), and a command run without
 * DATABASE_URL takes it (and the folder's master key, unless HEARTH_MASTER_KEY is set) from
 * `./.hearth`, the default data folder, saying so on stderr. DATABASE_URL set wins.
 */
import fs from 'node:fs';
import path from 'node:path';

export const DEFAULT_DATA_DIR = '.hearth';
const CONNECTION_FILE = 'connection.json';
const MASTER_KEY_FILE = 'master.key';

export function masterKeyFile(dataDir: string): string {
  return path.join(dataDir, MASTER_KEY_FILE);
}

/** Written by `hearth dev` once its embedded database is up. */
export function writeDevConnection(dataDir: string, databaseUrl: string): void {
  fs.writeFileSync(path.join(dataDir, CONNECTION_FILE), `${JSON.stringify({ databaseUrl }, null, 2)}\n`, { mode: 0o600 });
}

/** The URL with its password hidden, for what a command prints. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * `env` with DATABASE_URL (and HEARTH_MASTER_KEY when unset) from the `hearth dev` data folder in
 * `cwd`, when DATABASE_URL is not set and the folder has a connection; `say` hears what was used.
 */
export function withDevDefaults(env: NodeJS.ProcessEnv, say: (line: string) => void, cwd = process.cwd()): NodeJS.ProcessEnv {
  // A database named in the environment is never paired with the dev folder's master key.
  if (env.DATABASE_URL) return env;
  const dataDir = path.join(cwd, DEFAULT_DATA_DIR);
  const connection = readJson(path.join(dataDir, CONNECTION_FILE));
  if (typeof connection?.databaseUrl !== 'string') return env;
  const filled: NodeJS.ProcessEnv = { ...env, DATABASE_URL: connection.databaseUrl };
  if (!env.HEARTH_MASTER_KEY && fs.existsSync(masterKeyFile(dataDir))) filled.HEARTH_MASTER_KEY = fs.readFileSync(masterKeyFile(dataDir), 'utf8').trim();
  say(`using the database of \`hearth dev\` (${DEFAULT_DATA_DIR}/connection.json): ${withoutPassword(connection.databaseUrl)}; set DATABASE_URL to use another`);
  return filled;
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
