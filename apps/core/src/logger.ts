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
    const pretty = pino.transport({
      target: 'pino-pretty',
      options: { destination: 1, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true },
    });
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
 * A line may also come as its fields and a formatter (`defer`, the access line): it is formatted
 * just before anything logged after it, or the write: in one loop with the other lines kept so, which
 * costs less than formatting each among a request's other work.
 */
export class BufferedDestination {
  static readonly FLUSH_EVERY_MS = 10;
  private static readonly BUFFER_BYTES = 64 * 1024;

  private readonly buffer = Buffer.allocUnsafe(BufferedDestination.BUFFER_BYTES);
  private used = 0;
  private scheduled = false;
  private lastWrite = -Infinity;
  /** Lines kept as fields, in order: each with its formatter and the time it was logged. */
  private readonly deferred: unknown[] = [];
  private readonly formats: ((fields: never, time: number) => FormattedLine)[] = [];
  private readonly times: number[] = [];

  constructor(private readonly fd: number) {
    process.on('exit', () => this.flush());
  }

  write(line: string): void {
    if (this.deferred.length > 0) this.formatDeferred();
    this.append(line, false);
    this.schedule();
  }

  /**
   * A line given as its fields, logged at `time`: `format` makes it when the lines are next written out,
   * or before the next line. The fields are kept until then, so the caller hands over an object it no longer changes.
   */
  defer<T>(fields: T, format: (fields: T, time: number) => FormattedLine, time: number): void {
    this.deferred.push(fields);
    this.formats.push(format as (fields: never, time: number) => FormattedLine);
    this.times.push(time);
    this.schedule();
  }

  private formatDeferred(): void {
    const { deferred, formats, times } = this;
    for (let i = 0; i < deferred.length; i++) {
      const line = formats[i](deferred[i] as never, times[i]);
      this.append(line.text, line.ascii);
    }
    deferred.length = 0;
    formats.length = 0;
    times.length = 0;
  }

  /** Into the buffer, writing out what is there first when it may not fit. */
  private append(line: string, ascii: boolean): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8: a line that may not fit is never cut.
    const most = ascii ? line.length : line.length * 3;
    if (most > this.buffer.length - this.used) {
      this.writeBuffered();
      if (most > this.buffer.length) return this.writeOut(Buffer.from(line));
    }
    this.used += ascii ? this.buffer.write(line, this.used, 'latin1') : this.buffer.write(line, this.used);
  }

  private schedule(): void {
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
    if (this.deferred.length > 0) this.formatDeferred();
    this.writeBuffered();
  }

  private writeBuffered(): void {
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

/** A formatted line, and whether it is all ASCII (then it is copied into the buffer byte for byte). */
export interface FormattedLine {
  text: string;
  ascii: boolean;
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
 * every request. The line's fields are kept until the destination writes (BufferedDestination.defer),
 * and the part that a route, method and status always write alike is made once. Any other logger
 * (readable lines, a test's) is given the line through pino.
 */
export function accessLogOf(logger: Logger): (line: AccessLine) => void {
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym];
  const bindings = internals[pino.symbols.chindingsSym];
  if (!(stream instanceof BufferedDestination) || typeof bindings !== 'string' || logger.levels.values.info !== INFO || logger.levels.values.error !== ERROR) {
    return (line) =>
      logger[line.status >= 500 ? 'error' : 'info'](
        { requestId: line.requestId, method: line.method, route: line.route, status: line.status, ms: line.ms },
        'request',
      );
  }
  const asciiBindings = ASCII.test(bindings);
  const middles = new AccessLineMiddles();
  const format = (line: AccessLine, time: number): FormattedLine => {
    const middle = middles.of(line.route, line.method, line.status);
    // An id that JSON writes as it is (every id the API makes or takes) needs no escaping.
    const plainId = PLAIN_JSON_TEXT.test(line.requestId);
    const id = plainId ? `"${line.requestId}"` : JSON.stringify(line.requestId);
    return {
      text: `{"level":${line.status >= 500 ? ERROR : INFO},"time":${time}${bindings},"requestId":${id}${middle.text}${Number.isFinite(line.ms) ? line.ms : null},"msg":"request"}\n`,
      ascii: asciiBindings && plainId && middle.ascii,
    };
  };
  return (line) => {
    if ((line.status >= 500 ? ERROR : INFO) < logger.levelVal) return;
    stream.defer(line, format, Date.now());
  };
}

/** Printable ASCII but `"` and `\`: JSON writes such a string between quotes as it is. */
const PLAIN_JSON_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const ASCII = /^[\x00-\x7f]*$/;

/**
 * The middle of the access line, `,"method":…,"route":…,"status":…,"ms":`, made once per route, method
 * and status (the API's are a few hundred; a flood of others only resets the memo).
 */
class AccessLineMiddles {
  private static readonly KEPT = 10_000;
  private readonly byRoute = new Map<string, Map<string, Map<number, FormattedLine>>>();
  private kept = 0;

  of(route: string, method: string, status: number): FormattedLine {
    let byMethod = this.byRoute.get(route);
    let byStatus = byMethod?.get(method);
    let middle = byStatus?.get(status);
    if (middle === undefined) {
      const text = `,"method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"status":${status},"ms":`;
      middle = { text, ascii: ASCII.test(text) };
      if (this.kept >= AccessLineMiddles.KEPT) {
        this.byRoute.clear();
        this.kept = 0;
        byMethod = undefined;
      }
      if (!byMethod) this.byRoute.set(route, (byMethod = new Map()));
      byStatus = byMethod.get(method);
      if (!byStatus) byMethod.set(method, (byStatus = new Map()));
      byStatus.set(status, middle);
      this.kept++;
    }
    return middle;
  }
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
