import { flushLogs } from '@hearth/core';

/** Writes to standard output after the log lines logged before it (the logger buffers its lines). */
export function print(text: string): void {
  flushLogs();
  process.stdout.write(text);
}

/** Commands print text for people, or one JSON document with --json. */
export function emit(json: boolean, value: unknown, text: () => string): void {
  print(json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

/** A failure is one clear line on stderr and a non-zero exit. */
export class CliError extends Error {}

/**
 * Rows for people: a header line of column names, then one line per row, each column padded to its
 * widest cell (two spaces between columns), as `kubectl get` prints. Empty cells print as `-`.
 */
export function table(columns: string[], rows: (string | number | null | undefined)[][]): string {
  const cells = [columns, ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined || cell === '' ? '-' : String(cell))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n');
}

/**
 * The hint of a "not found in namespace X" refusal when the same name is in other namespaces: the
 * likely mistake is the namespace (default unless --namespace names one). '' when it is nowhere else.
 */
export function otherNamespacesHint(namespaces: readonly string[]): string {
  return namespaces.length > 0 ? `; it is in ${namespaces.map((ns) => `--namespace ${ns}`).join(' or ')}` : '';
}

/**
 * The key id a revoke names. A whole key given instead (`hsk_<id>_<secret>`, `hlk_…`) is refused
 * without being printed back (it is a secret, and a terminal's scrollback or a CI log keeps what a
 * command prints), saying the id to give: the part after the prefix, which key lists show anyway.
 */
export function keyIdArgument(value: string, prefix: string, revokeCommand: string): string {
  if (!value.startsWith(prefix)) return value;
  const keyId = value.slice(prefix.length).split('_')[0];
  throw new CliError(`that is a whole key, not its id (a secret: not printed back here); revoke it by its id: ${revokeCommand} ${keyId}`);
}
