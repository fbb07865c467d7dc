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
 * Where pino's lines go: standard output, in few writes. Every request writes an access line, and the
 * write is what a line costs most: a write per event-loop turn (about 15 lines under load) still took
 * 6% of a cached read's server time, against 0.5% for a write per 10 ms (docs/performance.md, "The
 * access line"). So lines are encoded into one buffer as they come and written:
 * - at the end of the turn they were logged in, when nothing was written in the last FLUSH_EVERY_MS
 *   (a quiet process, a CLI command: its lines come out as before, in order with what it prints);
 * - else when FLUSH_EVERY_MS have passed since that write (a busy server: one write per 10 ms);
 * - at once when the buffer is full, and on exit (only a SIGKILL can lose the last 10 ms of lines).
 */
export class BufferedDestination {
  static readonly FLUSH_EVERY_MS = 10;
  private static readonly BUFFER_BYTES = 64 * 1024;

  private readonly buffer = Buffer.allocUnsafe(BufferedDestination.BUFFER_BYTES);
  private used = 0;
  private scheduled = false;
  private lastWrite = -Infinity;

  constructor(private readonly fd: number) {
    process.on('exit', () => this.flush());
  }

  write(line: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8: a line that may not fit is never cut.
    if (line.length * 3 > this.buffer.length - this.used) {
      this.flush();
      if (line.length * 3 > this.buffer.length) return this.writeOut(Buffer.from(line));
    }
    this.used += this.buffer.write(line, this.used);
    if (this.scheduled) return;
    this.scheduled = true;
    const wait = this.lastWrite + BufferedDestination.FLUSH_EVERY_MS - performance.now();
    if (wait <= 0) setImmediate(this.flushScheduled);
    else setTimeout(this.flushScheduled, Math.ceil(wait)).unref(); // the exit flush covers a process that ends first
  }

  private readonly flushScheduled = (): void => {
    this.scheduled = false;
    this.flush();
  };

  /** Writes out every line logged so far. */
  flush(): void {
    if (this.used === 0) return;
    const used = this.used;
    this.used = 0;
    this.writeOut(this.buffer.subarray(0, used));
  }

  private writeOut(data: Buffer): void {
    this.lastWrite = performance.now();
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
let stdout: BufferedDestination | undefined;

/** One destination per process for standard output (each would otherwise add an exit listener). */
export function stdoutDestination(): BufferedDestination {
  return (stdout ??= new BufferedDestination(1));
}

/** One answered request, as its access line says it. */
export interface AccessLine {
  requestId: string;
  method: string;
  /** The matched route's template (or a word for a request no route took). */
  route: string;
  status: number;
  ms: number;
}

/**
 * The API's access line, one per request: at info, at error for a 5xx. On the production logger
 * (JSON lines to standard output, createLogger) the line is formatted here, exactly as pino would
 * write `logger.info({ requestId, method, route, status, ms }, 'request')` (test/core/logger.test.ts
 * compares the two): pino's general formatting, which looks up serializers and escapes each key and
 * value character by character, took 6% of a cached read's server time, and this line is written for
 * every request. Any other logger (readable lines, a test's) is given the line through pino.
 */
export function accessLogOf(logger: Logger): (line: AccessLine) => void {
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym];
  const bindings = internals[pino.symbols.chindingsSym];
  if (!(stream instanceof BufferedDestination) || typeof bindings !== 'string' || logger.levels.values.info !== INFO || logger.levels.values.error !== ERROR) {
    return (line) => logger[line.status >= 500 ? 'error' : 'info']({ requestId: line.requestId, method: line.method, route: line.route, status: line.status, ms: line.ms }, 'request');
  }
  return (line) => {
    const level = line.status >= 500 ? ERROR : INFO;
    if (level < logger.levelVal) return;
    stream.write(
      `{"level":${level},"time":${Date.now()}${bindings},"requestId":${JSON.stringify(line.requestId)},"method":${JSON.stringify(line.method)},` +
        `"route":${JSON.stringify(line.route)},"status":${line.status},"ms":${Number.isFinite(line.ms) ? line.ms : null},"msg":"request"}\n`,
    );
  };
}

const INFO = 30;
const ERROR = 50;

/**
 * Writes out the log lines still buffered, for code that writes to standard output itself (the CLI's
 * output), so that what it prints comes after the lines logged before it.
 */
export function flushLogs(): void {
  stdout?.flush();
}
