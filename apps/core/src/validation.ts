import type * as AjvModule from 'ajv';
import type { default as Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type * as AjvFormats from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';

/**
 * One ajv instance for every schema (route schemas and manifest schemas): strict, all errors off so
 * the first failure is reported, and no coercion except where a caller asks (query strings). ajv is
 * loaded by the first instance: a command that validates nothing (`hearth get`) never loads it.
 */
export function createAjv(options: { coerceTypes?: boolean } = {}): Ajv {
  const { default: AjvClass } = require('ajv') as typeof AjvModule;
  const { default: addFormats } = require('ajv-formats') as typeof AjvFormats;
  const ajv = new AjvClass({
    strict: false,
    allErrors: false,
    coerceTypes: options.coerceTypes ?? false,
    useDefaults: true,
    removeAdditional: false,
  });
  addFormats(ajv);
  return ajv;
}

const compiled = new WeakMap<TSchema, ValidateFunction>();
let sharedAjv: Ajv | undefined;
const shared = (): Ajv => (sharedAjv ??= createAjv());

export function compile(schema: TSchema, ajv: Ajv = shared()): ValidateFunction {
  if (ajv !== sharedAjv) return ajv.compile(schema);
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    compiled.set(schema, fn);
  }
  return fn;
}

/** The first failure of a validator that has just answered false (ajv then always sets `errors`). */
export function firstError(fn: ValidateFunction): ErrorObject {
  const error = fn.errors?.[0];
  if (!error) throw new Error('firstError: the validator reported no failure');
  return error;
}

/** The dotted path of the field an ajv error is about, under `prefix` (e.g. `body.displayName`). */
export function fieldOf(error: ErrorObject, prefix: string): string {
  const parts = error.instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'additionalProperties') parts.push(String(error.params.additionalProperty));
  if (error.keyword === 'required') parts.push(String(error.params.missingProperty));
  return [prefix, ...parts].filter(Boolean).join('.');
}

export function describe(error: ErrorObject): string {
  switch (error.keyword) {
    case 'additionalProperties':
      return 'is not taken here';
    case 'required':
      return 'is required';
    default:
      return error.message ?? 'is not valid';
  }
}
