import { FilingLimitReached, SUPPORT_FILING_LIMIT, type Filed } from '@hearth/core/support';
import { PlayerReport, SupportFiled, SupportRequest } from '@hearth/core/shapes';
import { type AnyRoute, type HandlerContext, type HandlerResult } from '../../http/route';
import { supportRoute } from './area';

/** Said on both routes, from the limit's one definition. */
const LIMIT_NOTE =
  `Requests and reports together: at most ${SUPPORT_FILING_LIMIT.limit} filings per player per clock hour ` +
  '(UTC, from :00). The next is refused with 429 `rate-limited`, `Retry-After` and `details.retryAfterSeconds` ' +
  '(seconds until the hour ends), and is neither stored nor counted; a refused filing of any kind counts nothing. ' +
  'The X-RateLimit-* headers show this limit when it is the nearest to refusing.';

/** Stores the filing and puts the filer's standing against the hourly limit into the headers, refused or not. */
async function file(ctx: Pick<HandlerContext<unknown, unknown, unknown>, 'noteLimit'>, filing: () => Promise<Filed>): Promise<HandlerResult<SupportFiled>> {
  try {
    const { id, standing } = await filing();
    ctx.noteLimit(standing);
    return { status: 201, body: { id } };
  } catch (err) {
    if (err instanceof FilingLimitReached) ctx.noteLimit(err.standing);
    throw err;
  }
}

export const createSupportRequest = supportRoute({
  operationId: 'createSupportRequest',
  method: 'POST',
  path: '/support/requests',
  summary: 'Ask for support',
  description: `Stored for the game's staff. ${LIMIT_NOTE}`,
  credential: 'player',
  body: SupportRequest,
  success: { status: 201, description: 'Filed', schema: SupportFiled },
  refusals: ['rate-limited'],
  handler: (ctx) => file(ctx, () => ctx.core.support.fileRequest(ctx.db, ctx.env, ctx.principal.playerId, ctx.body)),
});

export const createPlayerReport = supportRoute({
  operationId: 'createPlayerReport',
  method: 'POST',
  path: '/support/reports',
  summary: 'Report a player',
  description: `Stored for the game's staff. A player not of the caller's environment is \`not-found\`; reporting oneself is \`invalid-request\` naming \`body.playerId\`. ${LIMIT_NOTE}`,
  credential: 'player',
  body: PlayerReport,
  success: { status: 201, description: 'Filed', schema: SupportFiled },
  refusals: ['not-found', 'invalid-request', 'rate-limited'],
  handler: (ctx) => file(ctx, () => ctx.core.support.fileReport(ctx.db, ctx.env, ctx.principal.playerId, ctx.body)),
});

/** The support area's routes: routes/index.ts registers them by this one name. */
export const supportRoutes: AnyRoute[] = [createSupportRequest, createPlayerReport];
