/**
 * Game content (spec §2 ConfigRow, ConfigTable, Flag): the answers of the config reads and what a
 * values read may ask, declared once for the route and the service.
 */
import { Type, type Static } from '@sinclair/typebox';
import { PageQuery } from './common';

export const Cell = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);
export const ColumnType = Type.Union([Type.Literal('string'), Type.Literal('int'), Type.Literal('float'), Type.Literal('bool')], {
  description: 'which of the value fields holds the value',
});

export const ConfigRow = Type.Object(
  {
    key: Type.String(),
    groupName: Type.Union([Type.String(), Type.Null()]),
    type: ColumnType,
    valueStr: Type.Union([Type.String(), Type.Null()]),
    valueInt: Type.Union([Type.Number(), Type.Null()]),
    valueFloat: Type.Union([Type.Number(), Type.Null()]),
    valueBool: Type.Union([Type.Boolean(), Type.Null()]),
    // Spec §2: "object or null", always null for values made in the console; its content is not the API's to fix.
    LevelRateConfig: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  },
  { $id: 'ConfigValue', additionalProperties: false },
);

export const ConfigTable = Type.Object(
  {
    key: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    groupName: Type.Union([Type.String(), Type.Null()]),
    columns: Type.Array(Type.Object({ key: Type.String(), label: Type.String(), type: ColumnType }, { additionalProperties: false })),
    rows: Type.Array(
      Type.Object(
        { key: Type.String(), sortOrder: Type.Number(), cells: Type.Record(Type.String(), Cell, { additionalProperties: false }) },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'ConfigTable', additionalProperties: false },
);

export const Flag = Type.Object({ name: Type.String(), isEnabled: Type.Boolean() }, { $id: 'Flag', additionalProperties: false });
export type Cell = Static<typeof Cell>;
export type ConfigRow = Static<typeof ConfigRow>;
export type ConfigTable = Static<typeof ConfigTable>;
export type Flag = Static<typeof Flag>;

/** GET /config/values: one group, or all, a page at a time. */
export const ConfigValuesQuery = Type.Object(
  { groupName: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })), ...PageQuery },
  { additionalProperties: false },
);
export type ConfigValuesQuery = Static<typeof ConfigValuesQuery>;

/** GET /config/tables/{key}: a table's key as a path segment can carry it. */
export const ConfigTablePath = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\s/\\\\?%]+$', description: 'no whitespace and none of / \\ ? %' }) },
  { additionalProperties: false },
);
