/**
 * What each refusal's `details` holds (spec §7): one declaration the document reads for the
 * `ErrorDetails` component and for each code's required fields, and that a test holds the
 * refusals the suite provokes to.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../contract/error-codes';
import { Shape } from './common';
import { DeckProblem } from './cards';

const Count = (description: string) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

/** Every field any refusal's details may carry; which codes carry which: ERROR_DETAILS. */
export const ErrorDetailsShape = Shape(
  'ErrorDetails',
  {
    field: Type.Optional(Type.String({ description: 'the input at fault: `body.<field>`, `query.<name>`, `path.<name>` or `header.<name>`' })),
    quota: Type.Optional(Type.String({ description: '`quota-exceeded`: what the limit counts' })),
    limit: Type.Optional(
      Count(
        "the limit passed: how many are allowed (`quota-exceeded`, `owned-limit`, a full session's seats), or the most bytes a route takes (`payload-too-large`)",
      ),
    ),
    retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 1, description: '`rate-limited`: as the Retry-After header' })),
    currencyKey: Type.Optional(Type.String({ description: 'the currency the refusal is about' })),
    itemTypeKey: Type.Optional(Type.String({ description: 'the item type the refusal is about' })),
    cardTypeKey: Type.Optional(Type.String({ description: 'the card type the refusal is about' })),
    cardTemplateKey: Type.Optional(Type.String({ description: 'the card template the refusal is about' })),
    nodeKey: Type.Optional(Type.String({ description: 'the skill node the refusal is about' })),
    held: Type.Optional(Count('how much is held (or, of a consumed currency, has been spent)')),
    requested: Type.Optional(Count('how much the request asked for')),
    allowance: Type.Optional(Count('`allowance-exceeded`: the allowance sent')),
    storeErrorCode: Type.Optional(Type.Integer({ description: "`provider-refused`: the store's own error code" })),
    missing: Type.Optional(Type.Array(Type.String(), { description: '`locked`: the unlock keys (and skill node keys) the player lacks' })),
    problems: Type.Optional(
      Type.Array(DeckProblem, {
        description:
          'what is wrong with a deck, as its validation lists it (spec §7 names it among the game-service details). No route refuses with it in v1: ' +
          'a deck with problems is answered 200 by its validation, not refused; a client may still meet it in a later minor version',
      }),
    ),
  },
  { description: 'What a refusal adds to its message; which fields each code carries is said by the operation answering it.' },
);
/**
 * What the API's refusals' details hold. Refusal itself takes any details (the manifests' refusals
 * carry fields of their own that the API never answers); the contract test holds every refusal the API
 * answers to this shape.
 */
export type AnsweredErrorDetails = Static<typeof ErrorDetailsShape>;
type DetailField = keyof AnsweredErrorDetails;

/**
 * The details each code's refusals always carry (`required`) and may carry (`optional`). Codes not
 * listed carry none, or only `field` as every validation failure does.
 */
export const ERROR_DETAILS: Partial<Record<ErrorCode, { required: DetailField[]; optional?: DetailField[] }>> = {
  'invalid-request': { required: [], optional: ['field', 'currencyKey'] },
  conflict: { required: [], optional: ['limit', 'field'] },
  // A refusal naming what it did not find may say which input named it.
  'not-found': { required: [], optional: ['field'] },
  'quota-exceeded': { required: ['quota', 'limit'] },
  'insufficient-balance': { required: ['held', 'requested'], optional: ['currencyKey', 'itemTypeKey', 'cardTypeKey'] },
  'allowance-exceeded': { required: ['currencyKey', 'held', 'requested', 'allowance'] },
  'balance-cap': { required: ['currencyKey', 'held', 'requested'] },
  disabled: { required: [], optional: ['currencyKey', 'itemTypeKey', 'cardTypeKey', 'cardTemplateKey', 'nodeKey'] },
  // Of an item type or a card type: one of the two keys.
  'not-purchasable': { required: [], optional: ['itemTypeKey', 'cardTypeKey', 'currencyKey'] },
  'owned-limit': { required: ['held', 'requested', 'limit'], optional: ['itemTypeKey', 'cardTypeKey'] },
  locked: { required: ['missing'], optional: ['itemTypeKey', 'nodeKey'] },
  'not-usable': { required: ['itemTypeKey'] },
  'already-consumed': { required: [], optional: ['itemTypeKey', 'cardTypeKey'] },
  'payload-too-large': { required: ['limit'] },
  'rate-limited': { required: ['retryAfterSeconds'] },
  'provider-refused': { required: ['storeErrorCode'] },
};

/** The details schema of one code's refusals, or undefined when it carries none. */
export function detailsSchemaOf(code: ErrorCode): TSchema | undefined {
  const declared = ERROR_DETAILS[code];
  if (!declared) return undefined;
  const fields = [...declared.required, ...(declared.optional ?? [])];
  const properties = Object.fromEntries(fields.map((name) => [name, ErrorDetailsShape.properties[name]]));
  return { type: 'object', properties, required: declared.required, additionalProperties: false } as unknown as TSchema;
}
