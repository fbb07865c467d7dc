export * from './errors';
export * from './shapes';
export * from './config';
export * from './logger';
export * from './ids';
export * from './cache';
export * from './clock';
export * from './validation';
export * from './pagination';
export * from './idempotency';
export * from './invalidation';
export * from './hearth';
export * from './db/knex';
export * from './db/sql-functions';
export * from './db/transaction';
export * from './db/statement';
export * from './db/unreachable';
export * from './coord/coordination';
export * from './coord/limits';
export { MemoryCoordination } from './coord/memory';
export { RedisCoordination } from './coord/redis';
export * from './tenancy/environments';
export * from './tenancy/registry';
export * from './tenancy/origins';
export * from './tenancy/catalog';
export * from './auth/token-claims';
export * from './auth/tokens';
export * from './auth/server-keys';
export * from './auth/signing-keys';
export * from './auth/authenticate';
export * from './auth/refresh';
export * from './sealing';
export * from './players/service';
export type { PlayerHoldings } from './players/deletion';
export * from './players/word-filter';
export * from './players/hold';
export * from './content/game-config';
export * from './content/game-config-sync';
export * from './content/content-watch';
export * from './legal/legal';
export * from './tours/tours';
export * from './contract/blog-content';
export * from './blog/sync';
export * from './blog/service';
export * from './contract/item-type';
export * from './contract/card-type';
export * from './items/item-types';
export * from './items/service';
export * from './items/purchases';
export * from './cards/definitions';
export * from './cards/service';
export * from './cards/decks';
export * from './progression/unlocks';
export * from './progression/skill-trees';
export * from './progression/xp';
export * from './stats/service';
export * from './contract/skill-tree';
export * from './content/definition-snapshots';
export * from './contract/game-keys';
export * from './contract/idempotency-key';
export * from './contract/ledger-reasons';
export * from './contract/resources';
export * from './manifests/schemas';
export * from './manifests/references';
export * from './manifests/status';
export * from './contract/rules';
export * from './manifests/crds';
export * from './manifests/identity-fields';
export * from './manifests/spec-fields';
export * from './manifests/validate';
export * from './manifests/reconcilers';
export * from './manifests/reconcile';
export * from './manifests/apply';
// Reading only: the documents are recorded by reconcileManifest and removeManifest.
export {
  type AppliedManifest,
  type AppliedStatus,
  type ManifestLink,
  appliedManifestElsewhere,
  appliedManifestLinks,
  listAppliedManifests,
  manifestYaml,
} from './manifests/documents';
export * from './sessions/events';
export * from './sessions/socket';
export * from './sessions/service';
export * from './saves/service';
export * from './support/service';
export * from './process/serving';
export * from './process/telemetry';
export * from './process/instruments';
export * from './process/series-metrics';
export * from './net/client-address';
export * from './net/paths';
export * from './tenancy/access';
export * from './canonical-json';
export * from './economy/definitions';
export * from './economy/service';
export * from './economy/engine';
export * from './economy/move-kinds';
export * from './economy/refusals';
export * from './economy/senders';
export * from './storage/object-store';
export * from './storage/disk-store';
export * from './storage/s3-store';
export * from './storage/open';
export * from './storage/upload-tokens';
export * from './crashes/queue';
export * from './crashes/fingerprint';
export * from './crashes/records';
export * from './crashes/symbols';
export * from './crashes/uploads';
export { KEY_SET_FETCH } from './auth/idp';
export * from './tenancy/organisations';
export * from './licence/keys';
export * from './licence/tokens';
export type { LicenceService } from './licence/service';
export { LicenceSeats, type SeatStanding } from './licence/seats';
export * from './contract/dashboards';
export * from './contract/origins';
export { dashboardSecretsFrom, secretVariableOf, type DashboardSecretSource } from './dashboards/secrets';
export type { DashboardHosting, DashboardService } from './dashboards/service';
export { DASHBOARD_TOKEN_AUDIENCE, DASHBOARD_TOKEN_TYP, looksLikeDashboardToken } from './dashboards/tokens';
export { projectSecretPublicKey, sealProjectSecret, storeProjectSecret, type ProjectSecretName, type ProjectSecretOrigin } from './tenancy/project-secrets';
// The store adapter and the key reader are core's own: routes reach the store through the commerce service only
// (tests import them from their modules).
export { STORE_CALL, STORE_ERROR, TXN_STATUSES, isUint64, type TxnStatus } from './commerce/store';
export { DEFAULT_STORE_SECRETS_DIR } from './commerce/publisher-key';
export * from './contract/store';
export { IDENTIFY_LIMIT, CATALOG_DEFAULT_CURRENCY, GRANT_FEED_LOCK, IdentifyLimitReached, type CommerceService } from './commerce/service';
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
} from './commerce/report';
export * from './contract/product';
