import { Type } from '@sinclair/typebox';
import { FilingLimitReached, SUPPORT_FILING_LIMIT, type Filed } from '@hearth/core';
import { defineRoute, type HandlerContext, type HandlerResult } from '../../http/route';
import { Id, Trimmed } from '../../http/schema-helpers';

const Created = Type.Object({ id: Type.String({ description: 'the filing, as staff see it in `hearth support list`' }) }, { additionalProperties: false });

/** Said on both routes, from the limit's one definition. */
const LIMIT_NOTE =
  `Requests and reports together: at most ${SUPPORT_FILING_LIMIT.limit} filings per player per clock hour ` +
  '(UTC, from :00). The next is refused with 429 `rate-limited`, `Retry-After` and `details.retryAfterSeconds` ' +
  '(seconds until the hour ends), and is neither stored nor counted; a refused filing of any kind counts nothing. ' +
  'The X-RateLimit-* headers show this limit when it is the nearest to refusing.';

/** Stores the filing and puts the filer's standing against the hourly limit into the headers, refused or not. */
async function file(ctx: Pick<HandlerContext<unknown, unknown, unknown>, 'noteLimit'>, filing: () => Promise<Filed>): Promise<HandlerResult<{ id: string }>> {
  try {
    const { id, standing } = await filing();
    ctx.noteLimit(standing);
    return { status: 201, body: { id } };
  } catch (err) {
    if (err instanceof FilingLimitReached) ctx.noteLimit(err.standing);
    throw err;
  }
}

export const createSupportRequest = defineRoute({
  operationId: 'createSupportRequest',
  method: 'POST',
  path: '/support/requests',
  summary: 'Ask for support',
  description: `Stored for the game's staff. ${LIMIT_NOTE}`,
  tag: 'support',
  credential: 'player',
  service: 'support',
  body: Type.Object(
    {
      subject: Trimmed({ minLength: 3, maxLength: 120 }),
      message: Trimmed({ minLength: 10, maxLength: 5000 }),
      contactEmail: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: 'where staff may answer' })),
    },
    { additionalProperties: false },
  ),
  success: { status: 201, description: 'Filed', schema: Created },
  refusals: ['rate-limited'],
  handler: (ctx) => file(ctx, () => ctx.core.support.fileRequest(ctx.db, ctx.env, ctx.principal.playerId, ctx.body)),
});

export const createPlayerReport = defineRoute({
  operationId: 'createPlayerReport',
  method: 'POST',
  path: '/support/reports',
  summary: 'Report a player',
  description: `Stored for the game's staff. A player not of the caller's environment is \`not-found\`; reporting oneself is \`invalid-request\` naming \`body.playerId\`. ${LIMIT_NOTE}`,
  tag: 'support',
  credential: 'player',
  service: 'support',
  body: Type.Object(
    {
      playerId: Id('the player reported'),
      reason: Trimmed({ minLength: 2, maxLength: 60 }),
      details: Type.Optional(Trimmed({ maxLength: 2000 })),
    },
    { additionalProperties: false },
  ),
  success: { status: 201, description: 'Filed', schema: Created },
  refusals: ['not-found', 'invalid-request', 'rate-limited'],
  handler: (ctx) => file(ctx, () => ctx.core.support.fileReport(ctx.db, ctx.env, ctx.principal.playerId, ctx.body)),
});
