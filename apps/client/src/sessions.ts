/**
 * The SDK's entry: `Hearth` for one deployment, and the sessions that call it, a game server's (a
 * server key) or a player's (tokens, refreshed before they expire and once after a 401).
 */
import createClient, { type Client, type MaybeOptionalInit } from 'openapi-fetch';
import type { RequiredKeysOf, ResponseObjectMap, SuccessResponse } from 'openapi-typescript-helpers';
import { type HearthRefusal, HearthTransportError, refusalOf } from './errors';
import { type EtagStore, MemoryEtagStore } from './etag-store';
import type { components, paths } from './generated/openapi';
import type { OperationErrorCodes } from './generated/operations';
import { type Credential, DEFAULT_RETRY, type RetryOptions, conditionalReads, idempotencyKeys, transport } from './transport';
import { SessionsSocket, type SocketOptions, type WebSocketConstructor } from './socket';

export type PlatformTokens = components['schemas']['PlatformTokens'];
export type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
/** The paths that take a method. */
export type PathOf<M extends Method> = { [P in keyof paths]: paths[P] extends Record<M, object> ? P : never }[keyof paths];
/** What a call of `method path` takes: path and query parameters, headers, body. */
export type InitOf<M extends Method, P extends PathOf<M>> = MaybeOptionalInit<paths[P], M>;
type Args<M extends Method, P extends PathOf<M>> = RequiredKeysOf<InitOf<M, P>> extends never ? [init?: InitOf<M, P>] : [init: InitOf<M, P>];
/** What a call of `method path` answers on success. */
export type DataOf<M extends Method, P extends PathOf<M>> =
  ResponseObjectMap<paths[P][M]> extends infer R extends Record<string | number, any> ? SuccessResponse<R, 'application/json'> : never;
/** The refusal codes a call of `method path` may answer. */
export type CodesOf<M extends Method, P extends PathOf<M>> = P extends keyof OperationErrorCodes
  ? M extends keyof OperationErrorCodes[P]
    ? OperationErrorCodes[P][M]
    : never
  : never;
/** The outcome of `attempt`: the answer, or the refusal typed with the operation's codes. */
export type Attempt<M extends Method, P extends PathOf<M>> = { ok: true; data: DataOf<M, P> } | { ok: false; refusal: HearthRefusal<CodesOf<M, P> & string> };
/** The paths whose GET answers a page (`items`, `next`). */
export type PagedPath = { [P in PathOf<'get'>]: DataOf<'get', P> extends { items: unknown[]; next: string | null } ? P : never }[PathOf<'get'>];
type ItemOf<P extends PagedPath> = DataOf<'get', P> extends { items: (infer I)[] } ? I : never;

export interface HearthOptions {
  /** The API's base URL, with its version: `https://play.example.com/v1`. */
  baseUrl: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Where conditional reads keep their answers (default: in memory, per Hearth). */
  etagStore?: EtagStore;
  retry?: Partial<RetryOptions>;
  /** The WebSocket class for the sessions socket (default: the global one; in Node, pass `ws`). */
  WebSocket?: WebSocketConstructor;
}

export interface PlayerSessionOptions {
  /** Called with every new pair of tokens (after a refresh), to keep the refresh token for next time. */
  onTokens?: (tokens: PlatformTokens) => void;
  /** Refresh this long before the access token expires (default 60 s). */
  refreshAheadMs?: number;
}

export class Hearth {
  readonly baseUrl: string;
  readonly etagStore: EtagStore;
  readonly retry: RetryOptions;
  /** @internal */ readonly fetch: typeof fetch;
  /** @internal */ readonly WebSocket?: WebSocketConstructor;

  constructor(options: HearthOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.etagStore = options.etagStore ?? new MemoryEtagStore();
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.WebSocket = options.WebSocket;
  }

  /** A game server's session, with its server key (`hsk_<keyId>_<secret>`). Never ship a server key in a client. */
  server(serverKey: string): ServerSession {
    return new ServerSession(this, serverKey);
  }

  /** A player's session from tokens: a sign-in's answer, or tokens a game server signed the player in with. */
  player(tokens: PlatformTokens, options: PlayerSessionOptions = {}): PlayerSession {
    return new PlayerSession(this, tokens, options);
  }

  /** Signs a player in with the identity provider's id token (POST /auth/idp). */
  async signInWithIdentityProvider(appKey: string, idToken: string, options: PlayerSessionOptions = {}): Promise<PlayerSession> {
    const tokens = await new AnonymousSession(this).call('post', '/auth/idp', { body: { appKey, idToken } });
    return this.player(tokens, options);
  }
}

/** What every session does: typed calls, refusals as errors or results, pages as async iterators. */
export abstract class Session {
  /** The typed openapi-fetch client: `api.GET('/flags')` answers `{ data, error, response }`. */
  readonly api: Client<paths>;

  protected constructor(
    readonly hearth: Hearth,
    credential: Credential,
  ) {
    this.api = createClient<paths>({ baseUrl: hearth.baseUrl, fetch: transport(credential, hearth.fetch, hearth.retry) });
    this.api.use(
      idempotencyKeys,
      conditionalReads(hearth.etagStore, () => credential.cacheScope),
    );
  }

  /** Calls an operation: its answer, or a thrown HearthRefusal (HearthTransportError when the answer is not the API's). */
  async call<M extends Method, P extends PathOf<M>>(method: M, path: P, ...init: Args<M, P>): Promise<DataOf<M, P>> {
    const outcome = await this.attempt(method, path, ...init);
    if (!outcome.ok) throw outcome.refusal;
    return outcome.data;
  }

  /** Calls an operation: `{ ok: true, data }`, or `{ ok: false, refusal }` with `refusal.code` one of the operation's codes. */
  async attempt<M extends Method, P extends PathOf<M>>(method: M, path: P, ...init: Args<M, P>): Promise<Attempt<M, P>> {
    let result: { data?: unknown; error?: unknown; response: Response };
    try {
      result = await (this.api.request as (m: string, p: string, i?: unknown) => Promise<typeof result>)(method, path, init[0]);
    } catch (err) {
      throw err instanceof HearthTransportError
        ? err
        : new HearthTransportError(`${method.toUpperCase()} ${path} failed: ${(err as Error).message}`, undefined, { cause: err });
    }
    if (result.response.ok) return { ok: true, data: result.data as DataOf<M, P> };
    const refusal = await refusalOf(result.response, result.error);
    if (refusal instanceof HearthTransportError) throw refusal;
    return { ok: false, refusal: refusal as HearthRefusal<CodesOf<M, P> & string> };
  }

  /** Every item of a paged read, page after page, as the caller iterates. */
  async *items<P extends PagedPath>(path: P, ...init: Args<'get', P>): AsyncGenerator<ItemOf<P>, void, undefined> {
    const first = (init[0] ?? {}) as { params?: { query?: Record<string, unknown> } };
    let cursor: string | null | undefined = first.params?.query?.cursor as string | undefined;
    do {
      const query = { ...first.params?.query, ...(cursor ? { cursor } : {}) };
      const page = await (this.call as (m: string, p: string, i: unknown) => Promise<{ items: ItemOf<P>[]; next: string | null }>)('get', path, {
        ...first,
        params: { ...first.params, query },
      });
      yield* page.items;
      cursor = page.next;
    } while (cursor);
  }
}

class AnonymousSession extends Session {
  constructor(hearth: Hearth) {
    super(hearth, { authorization: async () => undefined, cacheScope: 'anonymous' });
  }
}

/** A game server's session: every call with its server key. */
export class ServerSession extends Session {
  constructor(hearth: Hearth, serverKey: string) {
    // The key id, never the secret, names its answers in the ETag store.
    super(hearth, { authorization: async () => `Bearer ${serverKey}`, cacheScope: `server:${serverKey.split('_')[1] ?? ''}` });
  }

  /** Signs a player in on the server's word (POST /auth/server): tokens to hand to the game client. */
  signInPlayer(subject: string, displayName?: string): Promise<PlatformTokens> {
    return this.call('post', '/auth/server', { body: displayName === undefined ? { subject } : { subject, displayName } });
  }
}

/** A player's session: its access token refreshed before it expires, and once after a 401. */
export class PlayerSession extends Session {
  private current: PlatformTokens;
  private expiresAt: number;
  private refreshing?: Promise<boolean>;
  private signedOut = false;

  constructor(
    hearth: Hearth,
    tokens: PlatformTokens,
    private readonly options: PlayerSessionOptions = {},
  ) {
    const credential: Credential = {
      authorization: async () => `Bearer ${await this.freshAccessToken()}`,
      renew: () => this.refresh(),
      cacheScope: `player:${tokens.player.id}`,
    };
    super(hearth, credential);
    this.current = tokens;
    this.expiresAt = Date.now() + tokens.expiresIn * 1000;
  }

  /** The access token, refreshed first when it expires within `refreshAheadMs` (calls and the socket alike). */
  private async freshAccessToken(): Promise<string> {
    if (Date.now() >= this.expiresAt - (this.options.refreshAheadMs ?? 60_000)) await this.refresh();
    return this.current.accessToken;
  }

  /** The tokens now (the refresh token changes with every refresh). */
  get tokens(): PlatformTokens {
    return this.current;
  }

  get playerId(): string {
    return this.current.player.id;
  }

  /**
   * New tokens for the refresh token (POST /auth/refresh), one refresh at a time however many calls
   * ask; false when the refresh token is refused (signed out, expired): sign in again.
   */
  refresh(): Promise<boolean> {
    if (this.signedOut) return Promise.resolve(false);
    this.refreshing ??= (async () => {
      try {
        const answer = await new AnonymousSession(this.hearth).attempt('post', '/auth/refresh', { body: { refreshToken: this.current.refreshToken } });
        if (!answer.ok) return false;
        this.current = answer.data;
        this.expiresAt = Date.now() + answer.data.expiresIn * 1000;
        this.options.onTokens?.(answer.data);
        return true;
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** Signs the player out everywhere (POST /players/me/sign-out): every refresh token of the player stops working. */
  async signOut(): Promise<void> {
    await this.call('post', '/players/{playerId}/sign-out', { params: { path: { playerId: 'me' } } });
    this.signedOut = true;
  }

  /**
   * Opens the sessions socket, authorized as this player. Where to connect is GET /realtime's `url`,
   * asked again before every reconnect (`options.locate` replaces that).
   */
  async socket(options: Partial<SocketOptions> = {}): Promise<SessionsSocket> {
    const WebSocketClass = options.WebSocket ?? this.hearth.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!WebSocketClass) throw new HearthTransportError('No WebSocket class: pass one (in Node, the ws package) as options.WebSocket');
    const locate = options.locate ?? (async () => (await this.call('get', '/realtime')).url);
    const socket = new SessionsSocket({
      ...options,
      url: await locate(),
      locate,
      WebSocket: WebSocketClass,
      token: () => this.freshAccessToken(),
      renew: () => this.refresh(),
    });
    await socket.open();
    return socket;
  }
}
