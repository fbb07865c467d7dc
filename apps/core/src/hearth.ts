import type { Db } from './db/knex';
import type { Coordination } from './coord/coordination';
import type { Logger } from './logger';
import { type Clock, type Timer, systemClock } from './clock';
import { InvalidationBus } from './invalidation';
import { EnvironmentRegistry } from './tenancy/registry';
import { ServerKeyVerifier } from './auth/server-keys';
import { TokenService } from './auth/tokens';
import { PlayerService } from './players/service';
import { Authenticator } from './auth/authenticate';
import { RefreshService } from './auth/refresh';
import { IdentityProviderVerifier } from './auth/idp';
import { GameConfigService } from './content/game-config';
import { ContentWatch, type ContentSources } from './content/content-watch';
import { CursorCodec } from './pagination';
import { deriveKey } from './sealing';
import { pruneIdempotencyRecords } from './idempotency';
import { SessionService } from './sessions/service';
import { LegalService } from './legal/legal';
import { TourService } from './tours/tours';
import { SaveService } from './saves/service';
import { BlogService } from './blog/service';
import { RealmService } from './economy/definitions';
import { EconomyService } from './economy/service';
import { ItemTypeService } from './items/item-types';
import { UnlockService } from './progression/unlocks';
import { SkillTreeService } from './progression/skill-trees';
import { XpService } from './progression/xp';
import { StatService } from './stats/service';
import { ItemService } from './items/service';
import { PurchaseService } from './items/purchases';
import { CardDefinitionService } from './cards/definitions';
import { CardService } from './cards/service';
import { DeckService } from './cards/decks';
import type { ObjectStore } from './storage/object-store';
import { SymbolService } from './crashes/symbols';
import { CrashUploadService } from './crashes/uploads';
import { SupportService } from './support/service';
import { CommerceService } from './commerce/service';
import { PublisherKeys } from './commerce/publisher-key';
import { deletePlayer } from './players/deletion';
import type { Queryable } from './db/knex';
import type { EnvironmentContext } from './tenancy/environments';
import { OriginDirectory } from './tenancy/origins';
import { Telemetry } from './process/telemetry';
import { LicenceService } from './licence/service';
import { type DashboardHosting, DashboardService } from './dashboards/service';
import { dashboardSecretsFrom } from './dashboards/secrets';
import { projectSecretKeys, publishProjectSecretKey, type ProjectSecretKeys } from './tenancy/project-secrets';

export interface HearthDeps {
  db: Db;
  coordination: Coordination;
  masterKey: Buffer;
  logger: Logger;
  /** Crash uploads and symbol files; absent where the process has no storage (crash routes answer 503). */
  objectStore?: ObjectStore;
  /** Whether custom dashboards are hosted and where their client secrets are; default hosted, secrets from the environment variables. */
  dashboards?: DashboardHosting;
  /** What the caches, the blog's schedule and the housekeeping read time from (clock.ts); default the system's. */
  clock?: Clock;
}

/** The domain services one process needs, wired once; the API and the realtime server both build on it. */
export class HearthCore {
  readonly db: Db;
  readonly coordination: Coordination;
  readonly logger: Logger;
  /** The time of the caches and schedules; what the process's background jobs (the store report) take too. */
  readonly clock: Clock;
  readonly objectStore: ObjectStore | undefined;
  readonly bus: InvalidationBus;
  readonly environments: EnvironmentRegistry;
  /** Every browser origin the deployment allows, in memory: what a preflight is answered from (tenancy/origins.ts). */
  readonly origins: OriginDirectory;
  readonly serverKeys: ServerKeyVerifier;
  readonly tokens: TokenService;
  readonly players: PlayerService;
  readonly authenticator: Authenticator;
  readonly refresh: RefreshService;
  readonly idp: IdentityProviderVerifier;
  readonly cursors: CursorCodec;
  /** Hears committed content changes from PostgreSQL (LISTEN/NOTIFY), with or without Redis. */
  readonly contentWatch: ContentWatch;
  readonly gameConfig: GameConfigService;
  readonly sessions: SessionService;
  readonly legal: LegalService;
  readonly tours: TourService;
  readonly saves: SaveService;
  readonly blog: BlogService;
  readonly realms: RealmService;
  readonly economy: EconomyService;
  readonly itemTypes: ItemTypeService;
  readonly unlocks: UnlockService;
  readonly skillTrees: SkillTreeService;
  readonly xp: XpService;
  readonly stats: StatService;
  readonly items: ItemService;
  readonly purchases: PurchaseService;
  readonly cardDefinitions: CardDefinitionService;
  readonly cards: CardService;
  readonly decks: DeckService;
  readonly symbols: SymbolService;
  readonly crashUploads: CrashUploadService;
  readonly support: SupportService;
  /** The organisations' licences for client plugins: keys, seats, licence tokens. */
  readonly licence: LicenceService;
  readonly dashboards: DashboardService;
  readonly commerce: CommerceService;
  /** What the domain tells the process's metrics (ledger moves, save writes): sinks attach to it. */
  readonly telemetry = new Telemetry();
  private housekeeping?: Timer;
  /** Opens what the operator carried sealed from a project's Secrets (the dashboard client secret, the store's publisher key). */
  private readonly projectSecretKeys: ProjectSecretKeys;

  constructor(deps: HearthDeps) {
    this.db = deps.db;
    this.projectSecretKeys = projectSecretKeys(deps.masterKey);
    this.coordination = deps.coordination;
    this.logger = deps.logger;
    this.clock = deps.clock ?? systemClock;
    this.objectStore = deps.objectStore;
    this.bus = new InvalidationBus(deps.coordination, (err) =>
      deps.logger.warn({ err: err.message }, 'could not announce a change; other processes will see it when their caches expire'),
    );
    // The services given the pool here load process-wide caches on it (environments, server keys,
    // signing keys, players' token state, content versions): the hot path reads them without waiting,
    // and they hold committed data only. Every other read and write takes its database from its caller.
    this.environments = new EnvironmentRegistry(deps.db, this.bus, this.clock);
    this.origins = new OriginDirectory(deps.db, this.bus, deps.logger);
    this.serverKeys = new ServerKeyVerifier(deps.db, this.bus, this.clock);
    this.tokens = new TokenService(deps.db, deps.masterKey, this.bus);
    this.players = new PlayerService(deps.db, this.bus, this.clock);
    this.licence = new LicenceService(deps.db, deps.masterKey, this.bus, this.clock);
    this.cursors = new CursorCodec(deriveKey(deps.masterKey, 'cursors'));
    this.dashboards = new DashboardService(
      deps.db,
      this.tokens,
      this.environments,
      this.cursors,
      deps.dashboards ?? { hosted: true, secrets: dashboardSecretsFrom(process.env, undefined) },
      this.projectSecretKeys,
    );
    this.authenticator = new Authenticator(this.serverKeys, this.tokens, this.environments, this.players, this.licence, this.dashboards);
    this.refresh = new RefreshService(deps.masterKey, this.tokens, this.authenticator, this.players);
    this.idp = new IdentityProviderVerifier();
    this.contentWatch = new ContentWatch(deps.db, this.bus, deps.logger, this.clock);
    const content: ContentSources = { pool: deps.db, cursors: this.cursors, bus: this.bus, watch: this.contentWatch };
    this.gameConfig = new GameConfigService(content);
    this.sessions = new SessionService(deps.coordination, deps.logger);
    this.legal = new LegalService(content, this.players);
    this.tours = new TourService(this.cursors);
    this.saves = new SaveService(this.cursors, this.telemetry);
    this.blog = new BlogService(content, this.clock);
    this.realms = new RealmService(this.cursors);
    this.economy = new EconomyService(this.cursors, this.telemetry);
    this.itemTypes = new ItemTypeService(content);
    this.unlocks = new UnlockService(this.cursors);
    this.skillTrees = new SkillTreeService(content);
    this.xp = new XpService(this.cursors);
    this.stats = new StatService(this.cursors);
    this.items = new ItemService(this.cursors, this.economy);
    this.purchases = new PurchaseService(this.telemetry);
    this.cardDefinitions = new CardDefinitionService(deps.db, this.cursors);
    this.cards = new CardService(this.cursors, this.economy, this.purchases);
    this.decks = new DeckService(this.cursors);
    this.symbols = new SymbolService(this.cursors, deps.logger, deps.objectStore);
    this.crashUploads = new CrashUploadService(deps.objectStore);
    this.support = new SupportService();
    this.commerce = new CommerceService(this.cursors, new PublisherKeys(this.projectSecretKeys), this.economy, this.items, content, deps.logger);
  }

  /** Deletes a player and everything every area holds for them, in one transaction (players/deletion.ts). */
  deletePlayer(db: Queryable, env: EnvironmentContext, playerId: string): Promise<void> {
    return deletePlayer(db, this, env, playerId);
  }

  async start(): Promise<void> {
    await this.bus.start();
    await this.contentWatch.start();
    await this.tokens.start();
    await this.licence.start();
    await this.origins.start();
    // The key the operator seals a project's secrets to (tenancy/project-secrets.ts).
    await publishProjectSecretKey(this.db, this.projectSecretKeys);
    // Expired idempotency records and used refresh tokens are swept now and then by every process;
    // the deletes are idempotent, so several processes sweeping at once is harmless.
    this.housekeeping = this.clock.every(10 * 60_000, () => {
      Promise.all([pruneIdempotencyRecords(this.db), this.refresh.prune(this.db)]).catch((err) => this.logger.warn({ err }, 'housekeeping failed'));
    });
  }

  async stop(): Promise<void> {
    this.housekeeping?.cancel();
    this.tokens.stop();
    this.licence.stop();
    this.origins.stop();
    await this.contentWatch.stop();
    await this.bus.stop();
  }
}
