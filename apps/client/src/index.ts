/**
 * @hearth/client: Hearth's TypeScript SDK for browser and Node games and game servers (docs/sdk.md).
 * Its types come from the API's OpenAPI document (src/generated, written by apps/client/generate.ts).
 */
export { Hearth, Session, ServerSession, PlayerSession } from './sessions';
export type { HearthOptions, PlayerSessionOptions, PlatformTokens, Method, PathOf, InitOf, DataOf, CodesOf, Attempt, PagedPath } from './sessions';
export { HearthRefusal, HearthTransportError } from './errors';
export type { ErrorCode, ErrorDetails } from './errors';
export { MemoryEtagStore, WebStorageEtagStore } from './etag-store';
export type { EtagStore, EtagEntry, WebStorage } from './etag-store';
export { SessionsSocket } from './socket';
export type { PlatformSession, ServerFrame, SocketEvents, SocketOptions, SocketState, WebSocketConstructor, WebSocketLike } from './socket';
export { idempotencyKey } from './transport';
export type { RetryOptions } from './transport';
export type { paths, components, operations } from './generated/openapi';
