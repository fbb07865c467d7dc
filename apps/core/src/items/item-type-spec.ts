/** Moved to spec/item-type.ts; kept while items/service.ts still imports it from here. */
export { ITEM_TYPE_LIMITS } from '../spec/item-type';
