import { type ChildProcess, spawn } from 'node:child_process';

/** Stops a child the tests started: SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
export async function stopProcess(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
}

/** What a command run to its end printed, and how it ended (-1: killed). */
export interface RunResult {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end without blocking the event loop, so the test can act while it runs (the
 * kubelet's part while helm waits); SIGKILL after `timeoutMs`.
 */
export function runCollected(command: string, args: string[], options: { timeoutMs: number; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ status: code ?? -1, stdout, stderr });
    });
  });
}
