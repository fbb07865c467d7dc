/**
 * The API's areas: every route names one (RouteSpec.tag), and the OpenAPI document lists each with
 * what it holds, so a generated client groups its operations the same way.
 */
export const API_TAGS = {
  reference: 'This API described: the OpenAPI document and the public keys that verify its tokens.',
  auth: "Player sign-in (the identity provider's id token, or a game server's word), token refresh and sign-out.",
  players: "A player's account: read it, rename it, delete it, sign it out everywhere.",
  config: 'Config values and tables the game reads, cached by ETag.',
  flags: 'Feature flags with their rollout, evaluated for the caller, cached by ETag.',
  sessions: 'Lobbies and matches: seats, readiness, the host, and the socket that follows them.',
  legal: "Legal documents and a player's acceptance of their versions.",
  tours: "In-game tours and the player's progress through them.",
  blog: 'The blog: published posts, categories and tags, cached by ETag.',
  saves: "A player's save slots: values read, written and deleted by key.",
  crashes: 'Crash report uploads, and the symbol files that make their stacks readable.',
  realms: 'Realms (seasons): the current one, the open ones, and every one defined.',
  inventory: "Currencies, items and stacks: a player's inventories, balances and ledger, and every move of value.",
  definitions: 'What the game defines (item types, card types and templates, skill trees), as applied by its manifests.',
  cards: "Collectible cards: a player's cards and stacks, and decks built from them.",
  progression: 'XP tracks with their levels, unlocks and skill trees.',
  stats: "Stats: a player's counters and the environment's, read and added to.",
  commerce: 'Store purchases: orders, their completion, entitlements and what they grant.',
  licence: 'Licences for client plugins: seats activated, checked and released with a licence key.',
  support: 'Support requests and reports of other players, filed by a player.',
  dashboards: "Dashboard sign-in (OpenID Connect), the token's session, and the player search of custom dashboards.",
} as const;

export type ApiTag = keyof typeof API_TAGS;
