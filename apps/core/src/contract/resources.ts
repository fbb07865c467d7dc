/**
 * The spec part of every Hearth custom resource, and the constants the domain shares with them: service
 * names, plan limits, the grammar of what documents hold. The spec layer: these are values the domain
 * reads and the manifest kinds (manifests/kinds/<area>.ts) wrap into documents; nothing here imports the
 * rest of core.
 */
import { Defaulted, Icon, ShownName } from './fields';
import { type Static, Type } from '@sinclair/typebox';
import { BlogContent } from './blog-content';
import type { ItemTypeSpec } from './item-type';
import { celRules, immutable } from './rules';
import { EnvironmentReference, Reference } from './names';
import { StoreSpec } from './store';

export { EnvironmentReference };
import { GameKey, MAX_BALANCE } from './game-keys';
import { DashboardSettingsSpec } from './dashboards';
import { OriginList } from './origins';

/** The GameEnvironment a document belongs to: every content kind's `spec.environment`. */
const Count = (description: string) => Type.Integer({ minimum: 0, description });
const PositiveCount = (description: string) => Type.Integer({ minimum: 1, description });

export const SERVICES = [
  'config',
  'flags',
  'sessions',
  'legal',
  'tours',
  'blog',
  'support',
  'persistence',
  'crashes',
  'commerce',
  'realms',
  'inventory',
  'cards',
  'progression',
  'stats',
] as const;
export type ServiceName = (typeof SERVICES)[number];

export const RealtimeLimitsSchema = Type.Object(
  {
    maxMessageBytes: PositiveCount('largest client frame, in bytes'),
    messagesPerSecond: PositiveCount('client frames a second per socket'),
    messagesPerMinute: PositiveCount('client frames a minute per socket'),
    maxSubscriptions: PositiveCount('sessions one socket may follow'),
  },
  { additionalProperties: false, description: "the realtime socket's limits" },
);

export const PlanSpec = Type.Object(
  {
    playersPerEnvironment: Count('player cap per environment'),
    playerDataBytesPerEnvironment: Count('saved bytes per environment'),
    serverKeysPerEnvironment: Count('live server keys per environment'),
    requestsPerMinutePerEnvironment: PositiveCount('requests a clock minute, all credentials of an environment'),
    requestsPerMinutePerCredential: PositiveCount('requests a clock minute, one credential'),
    requestsPerDayPerEnvironment: PositiveCount('requests a UTC day per environment'),
    sessionSeats: PositiveCount('the most seats a project may give a session'),
    realtime: RealtimeLimitsSchema,
    licenceSeats: Count('licence seats'),
  },
  { additionalProperties: false },
);

export const REVIEW_STATES = ['pending', 'approved', 'rejected', 'suspended'] as const;

export const IdentityProviderSpec = Type.Object(
  {
    issuer: Type.String({ minLength: 1, description: 'the id token issuer (iss)' }),
    jwksUri: Type.String({ minLength: 1, pattern: '^https?://', description: 'where the provider publishes its keys' }),
    clientId: Type.String({ minLength: 1, description: 'the audience the id tokens carry' }),
    deploymentId: Type.String({ minLength: 1, description: 'the deployment the tokens must name (pfdid claim)' }),
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'switched off: its id tokens are refused' })),
  },
  { additionalProperties: false, description: 'the OpenID Connect provider whose id tokens sign its players in' },
);

export const ProjectSpec = Type.Object(
  {
    plan: Reference('Plan', 'the Plan whose limits hold for its environments; changing it moves the project to that plan'),
    review: Type.Union(
      REVIEW_STATES.map((s) => Type.Literal(s)),
      { description: 'the review state: only an approved project serves players' },
    ),
    sessionSeats: PositiveCount('seats per session, held to the plan'),
    services: Type.Partial(
      Type.Object(
        Object.fromEntries(SERVICES.map((s) => [s, Type.Boolean({ description: `whether the ${s} service is on` })])) as Record<
          ServiceName,
          ReturnType<typeof Type.Boolean>
        >,
      ),
      { additionalProperties: false, description: 'the game services it uses: each on only when true' },
    ),
    identityProvider: Type.Optional(IdentityProviderSpec),
    wordFilter: Type.Optional(
      Type.Object(
        { words: Type.Array(Type.String({ minLength: 1, maxLength: 60 }), { maxItems: 10000, description: 'the words refused in what players write' }) },
        { additionalProperties: false, description: "the project's word filter" },
      ),
    ),
    store: Type.Optional(StoreSpec),
    progression: Type.Optional(
      Type.Object(
        {
          skillNodesUnlockedBy: Defaulted(
            Type.Union([Type.Literal('players'), Type.Literal('game')], {
              default: 'players',
              description:
                "`game`: a game of the service's own whose skill trees the game itself unlocks: only its servers unlock nodes, and the unlock route answers a player's token `forbidden`",
            }),
          ),
        },
        { additionalProperties: false, description: 'who unlocks skill nodes (docs/progression.md)' },
      ),
    ),
    dashboard: Type.Optional(DashboardSettingsSpec),
  },
  { additionalProperties: false },
);

export const GameEnvironmentSpec = Type.Object(
  {
    project: immutable(Reference('Project', 'the Project of this namespace it belongs to'), {
      why: "the environment's players, saves and keys belong to that project",
    }),
    appKey: immutable(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$', description: 'the public key game clients sign in with' }), {
      why: "every player's token carries it",
    }),
    cors: Type.Optional(
      Type.Object(
        {
          allowedOrigins: OriginList(
            'the web pages (browser games) that may call the API and open the sessions socket in this environment; none: browsers are refused, native clients are not affected',
          ),
        },
        { additionalProperties: false, description: 'browsers calling the API from a page (docs/api-conventions.md "Browsers (CORS)")' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const ServerKeySpec = Type.Object(
  {
    environment: immutable(Reference('GameEnvironment', 'the GameEnvironment the key acts in'), {
      why: 'the live key acts in that environment only; a move would revoke it at once, beyond undoing',
      change: 'a key does not move: create a ServerKey in the other environment, deploy its key, then delete this one',
    }),
  },
  { additionalProperties: false },
);

/**
 * A client plugin's product name, as POST /licence/activate takes it and a licence key lists what it
 * covers: printable ASCII without spaces, what a plugin can carry in its own build.
 */
export const LicenceProductName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[\\x21-\\x7E]+$',
  description: 'a client plugin product name (1-64 printable ASCII characters, no spaces)',
});
/** The most products one licence key covers. */
export const LICENCE_KEY_PRODUCTS_MAX = 32;

/**
 * A licence key of an organisation (its project, in the same namespace), for client plugins; its seats
 * come from the project's plan, and it activates machines only for the products it names.
 */
export const LicenceKeySpec = Type.Object(
  {
    project: immutable(Reference('Project', 'the Project in this namespace whose licence it is (the organisation)'), {
      why: "the live key is that organisation's credential; a move would revoke it at once, beyond undoing",
      change: 'a key does not move: create a LicenceKey for the other project, ship its key, then delete this one',
    }),
    products: Type.Array(LicenceProductName, {
      minItems: 1,
      maxItems: LICENCE_KEY_PRODUCTS_MAX,
      description: "the client plugins' products the licence covers: a machine activates with this key only for one of them; changing the list keeps the key",
      ...celRules({ rule: 'self.all(p, self.exists_one(q, q == p))', message: 'must name each product once' }),
    }),
  },
  { additionalProperties: false },
);

const ConfigKey = (description: string) => Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\s/\\\\?%]+$', description });
const GroupName = Type.String({ minLength: 1, maxLength: 120, description: 'the group the console shows it in' });
const ColumnType = (description: string) =>
  Type.Union([Type.Literal('string'), Type.Literal('int'), Type.Literal('float'), Type.Literal('bool')], { description });
const Cell = (description: string) => Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()], { description });

export const GameConfigSpec = Type.Object(
  {
    environment: EnvironmentReference(),
    values: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: ConfigKey('the key clients read it by'),
            type: ColumnType('the type of its value'),
            value: Cell('the value, of its type (null: none)'),
            groupName: Type.Optional(GroupName),
          },
          { additionalProperties: false },
        ),
        { description: 'config values: one key, one typed value each' },
      ),
    ),
    tables: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: ConfigKey('the key clients read the table by'),
            name: Type.String({ minLength: 1, maxLength: 200, description: 'shown in the console' }),
            description: Type.Optional(Type.String({ maxLength: 2000, description: 'what the table is for' })),
            groupName: Type.Optional(GroupName),
            columns: Type.Array(
              Type.Object(
                {
                  key: Type.String({ minLength: 1, maxLength: 120, description: 'the key cells name the column by' }),
                  label: Type.String({ maxLength: 200, description: 'shown in the console' }),
                  type: ColumnType("the type of the column's cells"),
                },
                { additionalProperties: false },
              ),
              { description: 'the columns, in order' },
            ),
            rows: Type.Array(
              Type.Object(
                {
                  key: Type.String({ minLength: 1, maxLength: 200, description: 'the key clients read the row by' }),
                  cells: Type.Record(Type.String(), Cell("a cell's value, of its column's type"), { description: 'the cells by column key' }),
                },
                { additionalProperties: false },
              ),
              { description: 'the rows, in order' },
            ),
          },
          { additionalProperties: false },
        ),
        { description: 'config tables: typed columns and keyed rows' },
      ),
    ),
    flags: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200, description: 'the flag clients read' }),
            enabled: Type.Boolean({ description: 'whether it is on' }),
          },
          { additionalProperties: false },
        ),
        { description: 'feature flags; a flag belongs to the one GameConfig that declared it first' },
      ),
    ),
  },
  { additionalProperties: false },
);

/** Keys players' clients name (legal documents, tours): ASCII, so byte order is the order everywhere. */
const ContentKey = (description: string) => Type.String({ minLength: 1, maxLength: 120, pattern: '^[A-Za-z0-9._:-]+$', description });

export const LegalDocumentSpec = Type.Object(
  {
    environment: immutable(EnvironmentReference(), { why: "players' acceptances are kept in that environment" }),
    document: Type.Optional(immutable(ContentKey("the environment's key for it; metadata.name when absent"), { why: "players' acceptances name it" })),
    title: Type.String({ minLength: 1, maxLength: 200, description: 'shown to players' }),
    url: Type.String({ minLength: 1, maxLength: 2000, pattern: '^https?://', description: 'where the text is published' }),
    version: Type.String({ minLength: 1, maxLength: 64, description: 'the current version, the one a player accepts' }),
    required: Type.Boolean({ description: 'whether a player must accept it to play' }),
  },
  { additionalProperties: false },
);

export const TourSpec = Type.Object(
  {
    environment: immutable(EnvironmentReference(), { why: "players' completions are kept in that environment" }),
    id: Type.Optional(immutable(ContentKey('the tour id clients name; metadata.name when absent'), { why: "players' completions name it" })),
    name: Type.String({ minLength: 1, maxLength: 200, description: 'shown to players; tours are listed by it' }),
    enabled: Defaulted(Type.Boolean({ default: true, description: 'only switched-on tours are listed and completed' })),
  },
  { additionalProperties: false },
);

/** Blog slugs: lower-case words joined by single hyphens, as they appear in addresses. */
const BlogSlug = (description: string) => Type.String({ minLength: 1, maxLength: 120, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', description });
const BlogTimestamp = Type.String({ format: 'date-time', description: 'ISO 8601 with an offset' });

export const BlogCategorySpec = Type.Object(
  {
    environment: EnvironmentReference(),
    slug: Type.Optional(BlogSlug('its address part; metadata.name when absent')),
    name: Type.String({ minLength: 1, maxLength: 120, description: 'shown to readers' }),
    description: Type.Optional(Type.String({ maxLength: 2000, description: 'what the category holds' })),
    order: Defaulted(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000, default: 0, description: 'console order: lower first, then by slug' })),
  },
  { additionalProperties: false },
);

export const BLOG_POST_STATUSES = ['draft', 'scheduled', 'published'] as const;

export const BlogPostSpec = Type.Object(
  {
    environment: EnvironmentReference(),
    slug: Type.Optional(BlogSlug('its address part; metadata.name when absent')),
    title: Type.String({ minLength: 1, maxLength: 200, description: 'the headline' }),
    subtitle: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'shown under the headline' })),
    excerpt: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'the summary lists show' })),
    content: BlogContent,
    seoTitle: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "the page title search engines show; the title's when absent" })),
    seoDescription: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'the description search engines show' })),
    authorName: Type.Optional(Type.String({ minLength: 1, maxLength: 120, description: 'the byline' })),
    category: BlogSlug('the slug of a BlogCategory of the same environment'),
    tags: Type.Optional(
      Type.Array(
        Type.Object(
          { slug: BlogSlug("the tag's address part"), name: Type.String({ minLength: 1, maxLength: 60, description: 'shown to readers' }) },
          { additionalProperties: false },
        ),
        { maxItems: 20, description: 'free tags' },
      ),
    ),
    cover: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://' }), Type.Null()], { description: 'the cover image address; null: none' }),
    ),
    featured: Defaulted(Type.Boolean({ default: false, description: 'shown first where the blog features posts' })),
    readingMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'computed from the content when absent' })),
    status: Type.Union(
      BLOG_POST_STATUSES.map((s) => Type.Literal(s)),
      { description: 'draft (hidden), scheduled (shown from publishAt) or published' },
    ),
    publishAt: Type.Optional(BlogTimestamp),
    publishedAt: Type.Optional(BlogTimestamp),
  },
  {
    additionalProperties: false,
    // Which time a post may carry follows from its status (docs/blog.md "Publication times").
    ...celRules(
      { rule: "self.status != 'scheduled' || has(self.publishAt)", message: 'is required for a scheduled post', fieldPath: '.publishAt' },
      { rule: "self.status == 'scheduled' || !has(self.publishAt)", message: 'is only for a scheduled post', fieldPath: '.publishAt' },
      { rule: "self.status == 'published' || !has(self.publishedAt)", message: 'is only for a published post', fieldPath: '.publishedAt' },
    ),
  },
);

export const RealmSpec = Type.Object(
  {
    environment: immutable(EnvironmentReference(), { why: 'its inventories stay there' }),
    key: Type.Optional(immutable(GameKey("the realm's key, also its id; metadata.name when absent"), { why: 'inventories name it' })),
    number: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'unique in the environment; 0 is the permanent realm' }),
    name: ShownName(),
    enabled: Defaulted(Type.Boolean({ default: true, description: 'a switched-off realm is never open' })),
    visible: Defaulted(Type.Boolean({ default: true, description: 'a hint for game clients, carried in the Realm shape' })),
    startAt: Type.String({ format: 'date-time', description: 'when it opens (ISO 8601 with an offset)' }),
    endAt: Type.Optional(Type.String({ format: 'date-time', description: 'when it closes; absent = never' })),
  },
  {
    additionalProperties: false,
    ...celRules({ rule: 'self.number != 0 || !has(self.endAt)', message: 'the permanent realm (number 0) never ends', fieldPath: '.endAt' }),
  },
);

export const CurrencySpec = Type.Object(
  {
    environment: immutable(EnvironmentReference(), { why: 'its balances stay there' }),
    key: Type.Optional(immutable(GameKey('the key moves name; metadata.name when absent'), { why: 'balances and the ledger name it' })),
    name: ShownName(),
    description: Type.Optional(Type.String({ maxLength: 2000, description: 'shown to players' })),
    icon: Icon(),
    scope: Type.Union([Type.Literal('account'), Type.Literal('realm')], { description: 'held on the account, or per realm' }),
    kind: Type.Union([Type.Literal('balance'), Type.Literal('consumed')], { description: 'a balance held, or a figure spent against allowances' }),
    max: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_BALANCE, description: 'the most the stored figure may reach; absent = 2^53-1' })),
    enabled: Defaulted(Type.Boolean({ default: true, description: 'a switched-off currency is listed but not moved' })),
  },
  { additionalProperties: false },
);

/**
 * What the domain reads of a document: its name (the default of its key) and its spec. Every kind's
 * document (manifests/kind.ts) is one of these, so the domain takes documents without knowing kinds.
 */
export interface Resource<S> {
  metadata: { name: string; namespace?: string };
  spec: S;
}

export type PlanLimits = Static<typeof PlanSpec>;
export type ProjectSpecT = Static<typeof ProjectSpec>;
export type GameConfigSpecT = Static<typeof GameConfigSpec>;
export type LegalDocumentSpecT = Static<typeof LegalDocumentSpec>;
export type TourSpecT = Static<typeof TourSpec>;
export type BlogCategorySpecT = Static<typeof BlogCategorySpec>;
export type BlogPostSpecT = Static<typeof BlogPostSpec>;
export type RealmSpecT = Static<typeof RealmSpec>;
export type CurrencySpecT = Static<typeof CurrencySpec>;
export type ItemTypeSpecT = Static<typeof ItemTypeSpec>;
