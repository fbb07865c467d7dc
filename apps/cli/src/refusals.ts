/**
 * Core's refusals as the command line says them. Core names a field relative to its input
 * (`realmId`); a command knows which flag carried it (`--realm`), as the API knows which part of
 * the request did. The message is core's own.
 */
import type { Refusal } from '@hearth/core';
import { CliError } from './output';

/** The request parts a field may still be named under (core's older refusals, and the API's own). */
const PART_PREFIX = /^(body|query|path|header)\./;

/** `code (--flag): message`, the flag the one that carried the refused field, when the command has it. */
export function refusalOnTheCommandLine(err: Refusal, flags: Readonly<Record<string, string>>): CliError {
  const field = err.details?.field;
  const name = typeof field === 'string' ? field.replace(PART_PREFIX, '').split('.', 1)[0] : undefined;
  const flag = name === undefined ? undefined : flags[name];
  return new CliError(`${err.code}${flag ? ` (${flag})` : ''}: ${err.message}`);
}
