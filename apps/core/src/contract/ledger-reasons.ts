/**
 * The reasons the money engine writes on the ledger entries of its own moves (docs/economy.md "Reasons
 * the engine keeps"): a purchase's charges, a skill node's, a store order's grant and its take-back.
 * They are reserved: a game's own move (the currency routes, `hearth economy credit|debit`) naming one
 * is refused, so the ledger always tells what the engine did from what a game did, and nothing a game
 * credits can pass for a store's grant.
 */
export const ENGINE_REASONS = {
  purchase: 'purchase',
  skillNode: 'skill-node',
  commerce: 'commerce',
  commerceRefund: 'commerce-refund',
  commerceChargeback: 'commerce-chargeback',
} as const;

export type EngineReason = (typeof ENGINE_REASONS)[keyof typeof ENGINE_REASONS];

const RESERVED: ReadonlySet<string> = new Set(Object.values(ENGINE_REASONS));

/** Whether `reason` is one of the engine's own (compared exactly, as the ledger stores it). */
export function isEngineReason(reason: string): reason is EngineReason {
  return RESERVED.has(reason);
}
