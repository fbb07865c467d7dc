/**
 * Walk-throughs of the docs run as a reader runs them: `hearth dev` started as the README says (a
 * checkout of its own, its data in `.hearth`), then a section's ```sh blocks run, as written, in one
 * bash, in that checkout. Only the addresses move: the docs name the default ports, and the tests
 * give `hearth dev` free ones.
 *
 * A command line ending in `# → TEXT` says what it prints: the test holds its output (trimmed) to
 * TEXT, where `…` stands for any text (an id, a time). The walk stops at the first command that fails
 * (`set -e -o pipefail`), naming it.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, baseEnv, spawnHearth } from './run-hearth';

export interface RunningDev {
  child: ChildProcess;
  base: string;
  appKey: string;
  serverKey: string;
  /** Everything it printed so far. */
  output: () => string;
}

/** Starts `hearth dev --data-dir $DATA_DIR` (in `cwd`) and reads what it prints; fails after 120 s. */
/** Starts `hearth dev` (`bin`: the tests' bundle unless told; the source executable is what `make dev` runs). */
export function startDev(vars: Record<string, string>, cwd?: string, bin?: string): Promise<RunningDev> {
  const child = spawnHearth(['dev', '--data-dir', vars.DATA_DIR], vars, cwd, bin);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`hearth dev did not start in 120 s:\n${out}\n${err}`));
    }, 120_000);
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const base = /base URL\s+(\S+)/.exec(out)?.[1];
      const appKey = /app key\s+(\S+)/.exec(out)?.[1];
      const serverKey = /server key\s+(hsk_\S+)/.exec(out)?.[1];
      // The last lines it prints are the demo accounts: the whole block is out.
      if (base && appKey && serverKey && /\n\s*\n$/.test(out.slice(out.indexOf('base URL')))) {
        clearTimeout(timer);
        resolve({ child, base, appKey, serverKey, output: () => out });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`hearth dev exited with ${code}:\n${out}\n${err}`));
    });
  });
}

/** SIGTERM, as Ctrl-C; SIGKILL after 30 s. Answers the exit code. */
export function stopDev(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.removeAllListeners('exit');
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

/**
 * A checkout of its own for a walk, as a reader's: `node_modules` of this one (so `npx hearth` and
 * `require('jose')` work there as in the repository), and `.hearth` made by `hearth dev`.
 */
export function walkCheckout(dir: string): string {
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

/** The ```sh blocks of the section of `doc` (a path from the repository's root) under `heading`, up to the next heading of its level. */
export function walkOf(doc: string, heading: string): string {
  const text = fs.readFileSync(path.join(REPO_ROOT, doc), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${doc} has no section "${heading}"`);
  const level = /^#+/.exec(heading)?.[0] ?? '##';
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^${level} `, 'm'));
  const section = end < 0 ? rest : rest.slice(0, end);
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  if (blocks.length === 0) throw new Error(`the section "${heading}" of ${doc} has no sh block`);
  return blocks.join('\n');
}

export interface WalkStep {
  /** The command as written (its lines joined). */
  command: string;
  /** What the doc says it prints. */
  expected: string;
  /** What it printed (trimmed). */
  printed: string;
}

const ANNOTATION = /\s+# → (.*)$/;

/**
 * Runs `script` (a walk's blocks) in bash in `cwd`, with the docs' default addresses replaced by
 * `addresses` (`http://127.0.0.1:8080` → where the test's dev listens). Answers each annotated step
 * with what it printed, and what `epilogue` (shell lines run after the walk, in the same shell, to
 * read its variables) printed.
 */
export async function runWalk(
  script: string,
  options: { cwd: string; addresses: Record<string, string>; epilogue?: string; timeoutMs?: number },
): Promise<{ steps: WalkStep[]; epilogue: string }> {
  let text = script;
  for (const [from, to] of Object.entries(options.addresses)) text = text.split(from).join(to);
  const lines = text.split('\n');
  const steps: Omit<WalkStep, 'printed'>[] = [];
  const out: string[] = ['set -e -o pipefail'];
  for (let i = 0; i < lines.length; i++) {
    const annotated = ANNOTATION.exec(lines[i]);
    if (!annotated || lines[i].trimStart().startsWith('#')) {
      out.push(lines[i]);
      continue;
    }
    // The command starts after the last line that does not continue onto the next (`\` at its end).
    let first = i;
    while (first > 0 && lines[first - 1].endsWith('\\')) first--;
    const command = lines.slice(first, i + 1);
    out.splice(out.length - (i - first), i - first);
    const n = steps.length;
    steps.push({ command: command.join('\n'), expected: annotated[1].trim() });
    out.push(`printf '\\n@@walk-step ${n}\\n'`, ...command, `printf '\\n@@walk-end ${n}\\n'`);
  }
  out.push(`printf '\\n@@walk-epilogue\\n'`, options.epilogue ?? '');
  const { stdout, stderr, error } = await new Promise<{ stdout: string; stderr: string; error: Error | null }>((resolve) =>
    execFile(
      'bash',
      ['-c', out.join('\n')],
      { cwd: options.cwd, env: baseEnv({}), timeout: options.timeoutMs ?? 180_000, maxBuffer: 16 * 1024 * 1024 },
      (err, so, se) => resolve({ stdout: so, stderr: se, error: err }),
    ),
  );
  const printedOf = (n: number) => {
    const begin = stdout.indexOf(`\n@@walk-step ${n}\n`);
    const end = stdout.indexOf(`\n@@walk-end ${n}\n`);
    return begin < 0 || end < 0 ? undefined : stdout.slice(begin + `\n@@walk-step ${n}\n`.length, end).trim();
  };
  if (error) {
    const stopped = steps.findIndex((_, n) => printedOf(n) === undefined);
    const at = stopped < 0 ? 'after its last annotated step' : `at or before: ${steps[stopped].command}`;
    throw new Error(`the walk failed ${at}\n${error.message}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
  }
  const epilogue = stdout.slice(stdout.indexOf('\n@@walk-epilogue\n') + '\n@@walk-epilogue\n'.length);
  return { steps: steps.map((step, n) => ({ ...step, printed: printedOf(n) ?? '' })), epilogue };
}

/** Whether `printed` is what the doc says, `…` standing for any text. */
export function printedAsSaid(step: WalkStep): boolean {
  const pattern = step.expected
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*');
  return new RegExp(`^${pattern}$`).test(step.printed);
}
