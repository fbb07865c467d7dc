/**
 * The yaml package, loaded when a document is first read or written as YAML rather than at start:
 * a command that does neither (`hearth get` as a table, `hearth keys`) never loads it.
 */
import type * as Yaml from 'yaml';

export const yaml = (): typeof Yaml => require('yaml') as typeof Yaml;
