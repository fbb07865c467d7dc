/** Commands print text for people, or one JSON document with --json. */
export function emit(json: boolean, value: unknown, text: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

/** A failure is one clear line on stderr and a non-zero exit. */
export class CliError extends Error {}
