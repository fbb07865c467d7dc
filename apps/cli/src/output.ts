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
