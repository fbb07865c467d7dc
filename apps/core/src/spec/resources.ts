/**
 * The spec part of every Hearth custom resource, and the constants the domain shares with them: service
 * names, plan limits, the grammar of what documents hold. The spec layer: these are values the domain
 * reads and the manifest kinds (manifests/schemas.ts) wrap into documents; nothing here imports the
 * rest of core.
 */
import { type Static, Type } from '@sinclair/typebox';
import { BlogContent } from './blog-content';
import type { ItemTypeSpec } from './item-type';
import { celRules } from './rules';
import { ResourceName } from './names';
import { GameKey, MAX_BALANCE } from './game-keys';
import { DashboardSettingsSpec } from './dashboards';

const Name = ResourceName;
const Count = (description: string) => Type.Integer({ minimum: 0, description });
const PositiveCount = (description: string) => Type.Integer({ minimum: 1, description });

export const SERVICES = [
  'config', 'flags', 'sessions', 'legal', 'tours', 'blog', 'support', 'persistence', 'crashes',
  'commerce', 'realms', 'inventory', 'cards', 'progression', 'stats',
] as const;
export type ServiceName = (typeof SERVICES)[number];

export const RealtimeLimitsSchema = Type.Object(
  {
    maxMessageBytes: PositiveCount('largest client frame, in bytes'),
    messagesPerSecond: PositiveCount('client frames a second per socket'),
    messagesPerMinute: PositiveCount('client frames a minute per socket'),
    maxSubscriptions: PositiveCount('sessions one socket may follow'),
  },
  { additionalProperties: false },
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
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);

export const ProjectSpec = Type.Object(
  {
    plan: Name,
    review: Type.Union(REVIEW_STATES.map((s) => Type.Literal(s))),
    sessionSeats: PositiveCount('seats per session, held to the plan'),
    services: Type.Partial(Type.Object(Object.fromEntries(SERVICES.map((s) => [s, Type.Boolean()])) as Record<ServiceName, ReturnType<typeof Type.Boolean>>), {
      additionalProperties: false,
    }),
    identityProvider: Type.Optional(IdentityProviderSpec),
    wordFilter: Type.Optional(
      Type.Object({ words: Type.Array(Type.String({ minLength: 1, maxLength: 60 }), { maxItems: 10000 }) }, { additionalProperties: false }),
    ),
    store: Type.Optional(Type.Object({}, { additionalProperties: true })),
    dashboard: Type.Optional(DashboardSettingsSpec),
  },
  { additionalProperties: false },
);

export const GameEnvironmentSpec = Type.Object(
  {
    project: Name,
    appKey: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' }),
  },
  { additionalProperties: false },
);

export const ServerKeySpec = Type.Object({ environment: Name }, { additionalProperties: false });

const ConfigKey = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\s/\\\\?%]+$' });
const GroupName = Type.String({ minLength: 1, maxLength: 120 });
const ColumnType = Type.Union([Type.Literal('string'), Type.Literal('int'), Type.Literal('float'), Type.Literal('bool')]);
const Cell = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

export const GameConfigSpec = Type.Object(
  {
    environment: Name,
    values: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: ConfigKey,
            type: ColumnType,
            value: Cell,
            groupName: Type.Optional(GroupName),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    tables: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: ConfigKey,
            name: Type.String({ minLength: 1, maxLength: 200 }),
            description: Type.Optional(Type.String({ maxLength: 2000 })),
            groupName: Type.Optional(GroupName),
            columns: Type.Array(
              Type.Object({ key: Type.String({ minLength: 1, maxLength: 120 }), label: Type.String({ maxLength: 200 }), type: ColumnType }, { additionalProperties: false }),
            ),
            rows: Type.Array(
              Type.Object({ key: Type.String({ minLength: 1, maxLength: 200 }), cells: Type.Record(Type.String(), Cell) }, { additionalProperties: false }),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    flags: Type.Optional(
      Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), enabled: Type.Boolean() }, { additionalProperties: false })),
    ),
  },
  { additionalProperties: false },
);

/** Keys players' clients name (legal documents, tours): ASCII, so byte order is the order everywhere. */
const ContentKey = (description: string) => Type.String({ minLength: 1, maxLength: 120, pattern: '^[A-Za-z0-9._:-]+$', description });

export const LegalDocumentSpec = Type.Object(
  {
    environment: Name,
    document: Type.Optional(ContentKey("the environment's key for it; metadata.name when absent")),
    title: Type.String({ minLength: 1, maxLength: 200 }),
    url: Type.String({ minLength: 1, maxLength: 2000, pattern: '^https?://' }),
    version: Type.String({ minLength: 1, maxLength: 64, description: 'the current version, the one a player accepts' }),
    required: Type.Boolean({ description: 'whether a player must accept it to play' }),
  },
  { additionalProperties: false },
);

export const TourSpec = Type.Object(
  {
    environment: Name,
    id: Type.Optional(ContentKey('the tour id clients name; metadata.name when absent')),
    name: Type.String({ minLength: 1, maxLength: 200, description: 'shown to players; tours are listed by it' }),
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'only switched-on tours are listed and completed' })),
  },
  { additionalProperties: false },
);

/** Blog slugs: lower-case words joined by single hyphens, as they appear in addresses. */
const BlogSlug = Type.String({ minLength: 1, maxLength: 120, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' });
const BlogTimestamp = Type.String({ format: 'date-time', description: 'ISO 8601 with an offset' });

export const BlogCategorySpec = Type.Object(
  {
    environment: Name,
    slug: Type.Optional(BlogSlug),
    name: Type.String({ minLength: 1, maxLength: 120 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    order: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000, default: 0, description: 'console order: lower first, then by slug' })),
  },
  { additionalProperties: false },
);

export const BLOG_POST_STATUSES = ['draft', 'scheduled', 'published'] as const;

export const BlogPostSpec = Type.Object(
  {
    environment: Name,
    slug: Type.Optional(BlogSlug),
    title: Type.String({ minLength: 1, maxLength: 200 }),
    subtitle: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    excerpt: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    content: BlogContent,
    seoTitle: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    seoDescription: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    authorName: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
    category: BlogSlug,
    tags: Type.Optional(
      Type.Array(Type.Object({ slug: BlogSlug, name: Type.String({ minLength: 1, maxLength: 60 }) }, { additionalProperties: false }), { maxItems: 20 }),
    ),
    cover: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://' }), Type.Null()])),
    featured: Type.Optional(Type.Boolean({ default: false })),
    readingMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'computed from the content when absent' })),
    status: Type.Union(BLOG_POST_STATUSES.map((s) => Type.Literal(s))),
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
    environment: Name,
    key: Type.Optional(GameKey("the realm's key, also its id; metadata.name when absent")),
    number: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'unique in the environment; 0 is the permanent realm' }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'a switched-off realm is never open' })),
    visible: Type.Optional(Type.Boolean({ default: true, description: 'a hint for game clients, carried in the Realm shape' })),
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
    environment: Name,
    key: Type.Optional(GameKey('the key moves name; metadata.name when absent')),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    icon: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    scope: Type.Union([Type.Literal('account'), Type.Literal('realm')], { description: 'held on the account, or per realm' }),
    kind: Type.Union([Type.Literal('balance'), Type.Literal('consumed')], { description: 'a balance held, or a figure spent against allowances' }),
    max: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_BALANCE, description: 'the most the stored figure may reach; absent = 2^53-1' })),
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'a switched-off currency is listed but not moved' })),
  },
  { additionalProperties: false },
);

/**
 * What the domain reads of a document: its name (the default of its key) and its spec. Every kind's
 * document (manifests/schemas.ts) is one of these, so the domain takes documents without knowing kinds.
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
