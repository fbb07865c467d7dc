/**
 * How the other commands find a running `hearth dev`: it writes its embedded database's address and
 * its process id to `connection.json` in its data folder (mode 0600, beside master.key), and removes
 * the file when it stops. A command run without DATABASE_URL takes the address (and the folder's
 * master key, unless HEARTH_MASTER_KEY is set) from `./.hearth`, the default data folder, saying so
 * on stderr. A data folder with no `hearth dev` serving it (stopped, killed, or the machine restarted)
 * is said in one line instead of a missing variable or a refused connection. DATABASE_URL set wins.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CliError } from './output';

export const DEFAULT_DATA_DIR = '.hearth';
const CONNECTION_FILE = 'connection.json';
const MASTER_KEY_FILE = 'master.key';

export function masterKeyFile(dataDir: string): string {
  return path.join(dataDir, MASTER_KEY_FILE);
}

/** What `hearth dev` serves besides its database: its API, its local store and its local OpenID Connect provider with its demo accounts. */
export interface DevServices {
  baseUrl: string;
  store: { url: string };
  /** Null where the local provider cannot run (no checkout, or no oidc-provider package). */
  provider: { issuer: string; clientId: string; redirectUri: string; accounts: { user: string; password: string; email: string; member: string }[] } | null;
}

/**
 * Written by `hearth dev` once it serves: which process serves, its services, and its embedded
 * database's address (none when DATABASE_URL names the database: the other commands are then given it too).
 */
export function writeDevConnection(dataDir: string, databaseUrl: string | undefined, services: DevServices): void {
  fs.writeFileSync(path.join(dataDir, CONNECTION_FILE), `${JSON.stringify({ databaseUrl, pid: process.pid, ...services }, null, 2)}\n`, { mode: 0o600 });
}

/** The services of the `hearth dev` serving `dataDir` (`.hearth` in `cwd` unless said); one not running is said in one line. */
export function runningDevServices(dataDir = path.join(process.cwd(), DEFAULT_DATA_DIR)): DevServices {
  const connection = readJson(path.join(dataDir, CONNECTION_FILE));
  const store = connection?.store as DevServices['store'] | undefined;
  if (!connection || typeof store?.url !== 'string' || !stillRunning(connection.pid)) {
    throw new CliError(
      `hearth dev is not running here (no ${path.join(path.relative(process.cwd(), dataDir) || '.', CONNECTION_FILE)} of a running one); start it (make dev) in this folder, or name its --data-dir`,
    );
  }
  return connection as unknown as DevServices;
}

/** Removed by `hearth dev` as it stops: the database and services it named are going away. */
export function removeDevConnection(dataDir: string): void {
  fs.rmSync(path.join(dataDir, CONNECTION_FILE), { force: true });
}

/** Whether the process `hearth dev` wrote down still runs (a file without a pid, from before pids were written, is taken as running). */
function stillRunning(pid: unknown): boolean {
  if (typeof pid !== 'number') return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
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
  if (typeof connection?.databaseUrl !== 'string' || !stillRunning(connection.pid)) {
    // A dev data folder here, and no dev serving it: say that, rather than "DATABASE_URL is required" or a refused connection.
    if (fs.existsSync(dataDir)) throw new CliError(`hearth dev is not running (its data is in ${DEFAULT_DATA_DIR}/); start it (make dev), or set DATABASE_URL`);
    return env;
  }
  const filled: NodeJS.ProcessEnv = { ...env, DATABASE_URL: connection.databaseUrl };
  if (!env.HEARTH_MASTER_KEY && fs.existsSync(masterKeyFile(dataDir))) filled.HEARTH_MASTER_KEY = fs.readFileSync(masterKeyFile(dataDir), 'utf8').trim();
  say(
    `using the database of \`hearth dev\` (${DEFAULT_DATA_DIR}/connection.json): ${withoutPassword(connection.databaseUrl)}; set DATABASE_URL to use another`,
  );
  return filled;
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
