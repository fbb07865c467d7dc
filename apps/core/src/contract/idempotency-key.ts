/**
 * The Idempotency-Key grammar, written once: the API's header and the command line's
 * `--idempotency-key` take the same keys.
 */
import { Type } from '@sinclair/typebox';

const IDEMPOTENCY_KEY_MAX = 128;
const IDEMPOTENCY_KEY_PATTERN = '^[\\x20-\\x7E]+$';

/** 1-128 printable ASCII characters. */
export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_MAX,
  pattern: IDEMPOTENCY_KEY_PATTERN,
  description: '1-128 printable ASCII characters',
});

const IDEMPOTENCY_KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);
export function isIdempotencyKey(text: string): boolean {
  return text.length <= IDEMPOTENCY_KEY_MAX && IDEMPOTENCY_KEY.test(text);
}
