import type { AnyRoute } from '../../http/route';
import { listCardTemplateDefinitions, listCardTypeDefinitions } from './definitions';
import { consumeCard, consumeCardStack, grantCard, grantCardStack, listCardStacks, listCards } from './held';
import { purchaseCards } from './purchases';
import { createDeck, deleteDeck, getDeck, listDecks, putDeckCard, renameDeck, setDeckType, takeDeckCard, validateDeck } from './decks';

/** The cards area's routes: routes/index.ts registers them by this one name. */
export const cardRoutes: AnyRoute[] = [
  listCardTypeDefinitions,
  listCardTemplateDefinitions,
  listCards,
  listCardStacks,
  purchaseCards,
  grantCard,
  consumeCard,
  grantCardStack,
  consumeCardStack,
  listDecks,
  createDeck,
  getDeck,
  renameDeck,
  deleteDeck,
  putDeckCard,
  takeDeckCard,
  setDeckType,
  validateDeck,
];
