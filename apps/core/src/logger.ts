import pino, { Logger } from 'pino';

export type { Logger };

export function createLogger(level = 'info', name = 'hearth'): Logger {
  return pino({ name, level, base: { pid: process.pid } });
}
