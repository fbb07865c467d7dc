/** @hearth/core/cards: what the other workspaces import of cards/ (docs/architecture.md "How an area plugs in"). */
export * from './definitions';
export * from './service';
export * from './decks';
