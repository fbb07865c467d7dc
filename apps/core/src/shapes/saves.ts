/**
 * Player saves (spec §2 Save, §4 "Player saves", §8 limits): the answers and the write request, the
 * one declaration the route validates and documents and the service is typed by.
 */
import { Type, type Static } from '@sinclair/typebox';
import { PageOf, Shape, Timestamp } from './common';

/** Spec §8. */
export const SAVE_LIMITS = {
  /** A value's compact JSON, in UTF-8 bytes. */
  valueBytes: 256 * 1024,
  /** All of one player's slots. */
  playerBytes: 5_242_880,
  keyPattern: /^[A-Za-z0-9._:-]{1,120}$/,
  /** Slots only a server key writes or deletes; a player token reads them. */
  serverPrefix: 'server:',
};

/** SaveEntry, Save and SaveList of spec §2. */
const SaveEntryFields = {
  key: Type.String(),
  version: Type.Integer({ minimum: 1, description: '1 when first written, +1 with every write' }),
  sizeBytes: Type.Integer({ minimum: 1, description: 'the value written compactly, in UTF-8 bytes' }),
  updatedAt: Timestamp,
};
export const SaveEntry = Shape('SaveEntry', SaveEntryFields);
export const Save = Shape('Save', { ...SaveEntryFields, data: Type.Unknown({ description: 'any JSON value but null' }), createdAt: Timestamp });
export const SaveList = PageOf(SaveEntry, {
  totalBytes: Type.Integer({ minimum: 0, description: "all the player's slots, not only this page" }),
  limitBytes: Type.Integer({ description: `${SAVE_LIMITS.playerBytes}` }),
});
export type SaveEntry = Static<typeof SaveEntry>;
export type Save = Static<typeof Save>;
export type SaveList = Static<typeof SaveList>;

/** A write: the value and, to write only from a known version, that version. */
export const SaveWriteRequest = Type.Object(
  {
    data: Type.Unknown({ description: `any JSON value but null, up to ${SAVE_LIMITS.valueBytes} bytes written compactly` }),
    expectedVersion: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'write only if the slot is at this version now; 0: only if it does not exist',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SaveWriteRequest = Static<typeof SaveWriteRequest>;
