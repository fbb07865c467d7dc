/** @hearth/core/commerce: what the other workspaces import of commerce/ (docs/architecture.md "How an area plugs in"). */
// The store adapter and the key reader are core's own: routes reach the store through the commerce service only
// (tests import them from their modules).
export { STORE_CALL, STORE_ERROR, TXN_STATUSES, isUint64, type TxnStatus } from './store';
export { DEFAULT_STORE_SECRETS_DIR } from './publisher-key';
export { IDENTIFY_LIMIT, CATALOG_DEFAULT_CURRENCY, GRANT_FEED_LOCK, IdentifyLimitReached, type CommerceService } from './service';
export {
  StoreReportJob,
  storeReportJob,
  revokeOrder,
  reportCursorLags,
  DEFAULT_STORE_REPORT_SETTINGS,
  type StoreReportSettings,
  type StoreReportObserver,
  type ProjectRunOutcome,
  type TickSummary,
  type TakeBack,
} from './report';
