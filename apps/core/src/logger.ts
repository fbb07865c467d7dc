import fs from 'node:fs';
import pino, { type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /**
   * Lines for a person at a terminal (pino-pretty, as a pino transport in a worker thread) instead of
   * JSON lines. Only `hearth dev` asks for it, and only when its output is a terminal.
   */
  readable?: boolean;
}

export function createLogger(level = 'info', name = 'hearth', options: LoggerOptions = {}): Logger {
  if (options.readable) {
    const pretty = pino.transport({ target: 'pino-pretty', options: { destination: 1, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true } });
    return pino({ name, level, base: { pid: process.pid } }, pretty);
  }
  return pino({ name, level, base: { pid: process.pid } }, stdoutDestination());
}

/**
 * Where pino's lines go: standard output, written once per event-loop turn rather than once per line.
 * Every request writes an access line, and a write call per line cost the hot path about 3 µs of its
 * ~40 (docs/performance.md). Lines wait at most until the end of the current turn; on exit, whatever
 * is pending is written before the process ends (only a SIGKILL can lose the current turn's lines).
 */
export class TurnBufferedDestination {
  private pending = '';
  private scheduled = false;
  private static readonly FLUSH_AT = 64 * 1024;

  constructor(private readonly fd: number) {
    process.on('exit', () => this.flush());
  }

  write(line: string): void {
    this.pending += line;
    if (this.pending.length >= TurnBufferedDestination.FLUSH_AT) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushAtTurnEnd);
    }
  }

  private readonly flushAtTurnEnd = (): void => {
    this.scheduled = false;
    this.flush();
  };

  flush(): void {
    if (this.pending === '') return;
    let data = Buffer.from(this.pending);
    this.pending = '';
    while (data.length > 0) {
      try {
        data = data.subarray(fs.writeSync(this.fd, data));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN') {
          Atomics.wait(WAIT, 0, 0, 1); // a full pipe: wait a millisecond for the reader
          continue;
        }
        if (code === 'EPIPE') return; // nobody reads the log any more
        throw err;
      }
    }
  }
}

const WAIT = new Int32Array(new SharedArrayBuffer(4));
let stdout: TurnBufferedDestination | undefined;

/** One destination per process for standard output (each would otherwise add an exit listener). */
export function stdoutDestination(): TurnBufferedDestination {
  return (stdout ??= new TurnBufferedDestination(1));
}
