/**
 * The stand-in store of the commerce tests: the local store `hearth dev` runs
 * (apps/cli/src/dev/store.ts), one implementation for both.
 */
export { type SettledStatus, type StandInCall, type StandInTxn, type StandInUser, StoreStandIn } from '../../apps/cli/src/dev/store';
