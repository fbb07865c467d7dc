import { Type } from '@sinclair/typebox';
import { SaveEntry, Save, SaveList, SaveWriteRequest, Id } from '@hearth/core/shapes';
import { type AnyRoute, BODY_LIMITS } from '../../http/route';
import { answeredForPlayer, doneForPlayer, listedForPlayer, playerPage, targetPlayerId } from '../players/target';
import { savesRoute } from './area';

const SlotPath = Type.Object(
  {
    playerId: Id('a player id, or `me` with a player token'),
    key: Type.String({
      minLength: 1,
      maxLength: 120,
      pattern: '^[A-Za-z0-9._:-]+$',
      description: '1-120 letters, digits and . _ : -; `server:` slots are written only with a server key',
    }),
  },
  { additionalProperties: false },
);

/** A player token writes as the player; a server key writes every slot, `server:` ones included. */
const writerOf = (principal: { kind: string }) => (principal.kind === 'player' ? 'player' : 'server');

export const listSaves = savesRoute({
  ...playerPage('persistence', 'saves'),
  ...listedForPlayer((ctx, playerId) => ctx.core.saves.list(ctx.db, ctx.env, playerId, ctx.query)),
  operationId: 'listSaves',
  path: '/players/:playerId/data',
  summary: "A player's save slots, ordered by key (values omitted)",
  description:
    "Pages through the player's save slots with each slot's version, size and time, but not its value (read a slot for that), and the bytes the player's saves take against the most they may. A player token reads its own (`me`); a server key any player's.",
  success: { status: 200, description: "A page of the player's slots, with the bytes all of them hold", schema: SaveList },
});

export const getSave = savesRoute({
  operationId: 'getSave',
  method: 'GET',
  path: '/players/:playerId/data/:key',
  summary: 'Read one save slot',
  description:
    'One save slot with its value and version; send the version back as `expectedVersion` on the next write, so that a write made elsewhere meanwhile is refused instead of lost. `not-found` when the slot does not exist.',
  credential: 'either',
  success: { status: 200, description: 'The save', schema: Save },
  ...answeredForPlayer({ params: SlotPath }, (ctx, playerId) => ctx.core.saves.get(ctx.db, ctx.env, playerId, ctx.params.key)),
});

export const putSave = savesRoute({
  operationId: 'putSave',
  method: 'PUT',
  path: '/players/:playerId/data/:key',
  summary: 'Write a save slot',
  description:
    'Versioned write: with `expectedVersion` the write happens only if the slot is at that version now (0: only if it does not exist), ' +
    "so a client retrying a write it got no answer to cannot write twice. Held to 5 MB per player and the plan's bytes per environment.",
  credential: 'either',
  params: SlotPath,
  body: SaveWriteRequest,
  bodyLimit: BODY_LIMITS.saveWrite,
  success: {
    status: 201,
    description: 'Written; the write made the slot',
    schema: SaveEntry,
    also: [{ status: 200, description: 'Written; the write replaced the slot' }],
  },
  links: [{ to: ['getSave', 'deleteSave'], parameters: { playerId: '$request.path.playerId', key: '$request.path.key' } }],
  refusals: ['not-found', 'forbidden', 'conflict', 'quota-exceeded'],
  handler: async (ctx) => {
    const { entry, created } = await ctx.core.saves.write(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.key, ctx.body, writerOf(ctx.principal));
    return { status: created ? 201 : 200, body: entry };
  },
});

export const deleteSave = savesRoute({
  operationId: 'deleteSave',
  method: 'DELETE',
  path: '/players/:playerId/data/:key',
  summary: 'Empty a save slot',
  description: 'Done whether or not the slot held anything; its bytes are given back to the quotas.',
  credential: 'either',
  success: { status: 204, description: 'The slot is empty' },
  ...doneForPlayer({ params: SlotPath }, (ctx, playerId) => ctx.core.saves.delete(ctx.db, ctx.env, playerId, ctx.params.key, writerOf(ctx.principal))),
});

/** The saves area's routes: routes/index.ts registers them by this one name. */
export const saveRoutes: AnyRoute[] = [listSaves, getSave, putSave, deleteSave];
