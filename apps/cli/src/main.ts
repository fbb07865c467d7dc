import { ConfigError } from '@hearth/core';
import { CliError } from './output';
import { buildProgram } from './program';

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    if (err instanceof CliError || err instanceof ConfigError) {
      process.stderr.write(`hearth: ${err.message}\n`);
    } else {
      // Still one line; the stack only when asked for (LOG_LEVEL=debug or trace).
      const verbose = ['debug', 'trace'].includes(process.env.LOG_LEVEL ?? '');
      // Never `hearth: undefined`: something thrown without a message is named by what it is.
      const message = (err as Error)?.message || (err === undefined ? 'failed for a reason it did not give (LOG_LEVEL=debug shows more)' : String(err));
      const text = verbose ? ((err as Error)?.stack ?? message) : message.replace(/\s*\n\s*/g, ' ');
      process.stderr.write(`hearth: ${text}\n`);
    }
    process.exit(1);
  });
