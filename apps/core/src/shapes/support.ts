/**
 * Support (spec §4 Support): a player's support request and report of another player, and what
 * filing either answers, declared once for the route's validation, the document and the service.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Id, Trimmed } from './common';

/** POST /support/requests. */
export const SupportRequest = Type.Object(
  {
    subject: Trimmed({ minLength: 3, maxLength: 120 }),
    message: Trimmed({ minLength: 10, maxLength: 5000 }),
    contactEmail: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: 'where staff may answer' })),
  },
  { additionalProperties: false },
);
export type SupportRequest = Static<typeof SupportRequest>;

/** POST /support/reports. */
export const PlayerReport = Type.Object(
  {
    playerId: Id('the player reported'),
    reason: Trimmed({ minLength: 2, maxLength: 60 }),
    details: Type.Optional(Trimmed({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);
export type PlayerReport = Static<typeof PlayerReport>;

/** What either filing answers. */
export const SupportFiled = Type.Object(
  { id: Type.String({ description: 'the filing, as staff see it in `hearth support list`' }) },
  { additionalProperties: false },
);
export type SupportFiled = Static<typeof SupportFiled>;
