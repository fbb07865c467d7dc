/**
 * The licence routes (spec §1, §5): a client plugin, holding its organisation's licence key, takes a
 * seat for its machine, checks it, and frees it. They belong to no environment: no review, no
 * service switch, counted against the caller's address (docs/licence.md). A token is for a product the
 * presenting key covers, and its `aud` is the organisation's own.
 */
import { JsonWebKeySet, LicenceActivation, LicenceMachine, LicenceStanding } from '@hearth/core/shapes';
import { LICENCE_TOKEN_SECONDS } from '@hearth/core/licence';
import { BODY_LIMITS, type AnyRoute } from '../../http/route';
import { licenceRoute } from './area';

const TOKEN_NOTE =
  `The answer carries a fresh licence token (lifetime ${LICENCE_TOKEN_SECONDS} s), verifiable offline with GET /licence/jwks.json; ` +
  "its `aud` is the organisation's own (`hearth-licence:<namespace>/<project>`) and its `product` one the licence key covers.";

/** What a plugin's calls declare alike: a POST with the organisation's licence key and a small body. */
const licenceCall = { method: 'POST', credential: 'licence', bodyLimit: BODY_LIMITS.licence } as const;

export const activateLicence = licenceRoute({
  ...licenceCall,
  operationId: 'activateLicence',
  path: '/licence/activate',
  summary: 'Take a seat of the licence for a machine',
  description:
    `The machine takes one of the organisation plan's licence seats; the same machine again keeps the seat it holds (its product and version updated). ` +
    `A product the licence key does not cover: 403 \`forbidden\` with \`details.field\` \`body.product\`, and nothing changes. ` +
    `Past the plan's seats: 403 \`quota-exceeded\` with \`details.quota\` \`licenceSeats\` and \`details.limit\`, and nothing changes. ${TOKEN_NOTE}`,
  body: LicenceActivation,
  bodyLimit: BODY_LIMITS.licence,
  success: { status: 200, description: 'The seat the machine holds', schema: LicenceStanding },
  refusals: ['forbidden', 'quota-exceeded'],
  handler: async (ctx) => ({ body: await ctx.core.licence.activate(ctx.db, ctx.principal, ctx.body) }),
});

export const checkLicence = licenceRoute({
  ...licenceCall,
  operationId: 'checkLicence',
  path: '/licence/check',
  summary: "Check a machine's seat",
  description:
    'A machine that holds no seat (never activated, or released) is 404 `not-found`; a seat for a product the licence key does not cover is 403 `forbidden`. ' +
    TOKEN_NOTE,
  body: LicenceMachine,
  bodyLimit: BODY_LIMITS.licence,
  success: { status: 200, description: 'The seat is valid', schema: LicenceStanding },
  refusals: ['forbidden', 'not-found'],
  handler: async (ctx) => ({ body: await ctx.core.licence.check(ctx.db, ctx.principal, ctx.body.machineId) }),
});

export const releaseLicence = licenceRoute({
  ...licenceCall,
  operationId: 'releaseLicence',
  path: '/licence/release',
  summary: "Free a machine's seat",
  description:
    'Releasing a machine that holds no seat (released already) changes nothing and answers the same. Tokens already issued stay valid until they expire.',
  body: LicenceMachine,
  bodyLimit: BODY_LIMITS.licence,
  success: { status: 204, description: 'The machine holds no seat' },
  refusals: [],
  handler: async (ctx) => {
    await ctx.core.licence.release(ctx.db, ctx.principal.organisation, ctx.body.machineId);
    return {};
  },
});

export const getLicenceJwks = licenceRoute({
  operationId: 'getLicenceJwks',
  method: 'GET',
  path: '/licence/jwks.json',
  summary: 'The public keys that verify licence tokens',
  description:
    "A key set of its own (never the player tokens'). While a key is being replaced the set holds two keys: the new first, the old until its last token expired.",
  credential: 'none',
  bodyLimit: BODY_LIMITS.licence,
  success: { status: 200, description: 'The key set', schema: JsonWebKeySet },
  refusals: [],
  handler: async (ctx) => ({ body: ctx.core.licence.jwks(), headers: { 'Cache-Control': 'public, max-age=300' } }),
});

/** The licence area's routes: routes/index.ts registers them by this one name. */
export const licenceRoutes: AnyRoute[] = [getLicenceJwks, activateLicence, checkLicence, releaseLicence];
