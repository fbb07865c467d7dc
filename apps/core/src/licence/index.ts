/** @hearth/core/licence: what the other workspaces import of licence/ (docs/architecture.md "How an area plugs in"). */
export * from './keys';
export * from './tokens';
export type { LicenceService } from './service';
export { LicenceSeats, type SeatStanding } from './seats';
