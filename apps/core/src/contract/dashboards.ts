/**
 * Custom dashboards' part of the manifests (docs/dashboards.md): a project's dashboard settings (its
 * organisation's OpenID Connect provider) and the DashboardMember kind (a person that provider asserts,
 * with permissions per environment), and the permissions a dashboard token can carry.
 */
import { Type, type Static } from '@sinclair/typebox';
import { EnvironmentReference, Reference, ResourceName } from './names';
import { celRules } from './rules';
import { OriginList } from './origins';

/**
 * What a member may do in an environment. `open_dashboard` is the spec's: signing in and the config
 * and flags reads need it; `view_players` opens GET /players. A member without `open_dashboard` in an
 * environment cannot sign in there, whatever else they hold.
 */
export const DASHBOARD_PERMISSIONS = ['open_dashboard', 'view_players'] as const;
export type DashboardPermission = (typeof DASHBOARD_PERMISSIONS)[number];
export const DashboardPermissionSchema = Type.Union(DASHBOARD_PERMISSIONS.map((p) => Type.Literal(p)));

/** Spec §5, §8: a dashboard token lives 3600 seconds. */
export const DASHBOARD_TOKEN_SECONDS = 3600;

/**
 * A key of a Kubernetes Secret in the document's namespace. Outside Kubernetes the same reference is
 * read from a file or an environment variable of the API process (docs/dashboards.md "The client
 * secret"); a secret is never written in a document.
 */
export const SecretKeyRef = Type.Object(
  {
    name: Type.String({ ...ResourceName, description: 'the Secret, in the namespace of the document' }),
    key: Type.String({ minLength: 1, maxLength: 253, pattern: '^[-_a-zA-Z0-9][-._a-zA-Z0-9]*$', description: 'the key in the Secret' }),
  },
  { additionalProperties: false, description: 'a key of a Secret in the namespace of the document' },
);

/** Project.spec.dashboard: the organisation's OpenID Connect provider its people sign in through. */
export const DashboardSettingsSpec = Type.Object(
  {
    issuer: Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://', description: "the provider's issuer; its discovery document is read from it" }),
    clientId: Type.String({ minLength: 1, maxLength: 255, description: 'the client the provider knows the dashboard as' }),
    redirectUri: Type.String({
      minLength: 1,
      maxLength: 2048,
      pattern: '^https?://',
      description: "the dashboard's redirect URI, as registered with the provider",
    }),
    clientSecretRef: Type.Optional(
      Type.Object({ secretKeyRef: SecretKeyRef }, { additionalProperties: false, description: 'absent: a public client (PKCE only)' }),
    ),
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'false: the project has no dashboard (sign-ins are not-found)' })),
    allowedOrigins: Type.Optional(OriginList("pages besides the redirect URI's own origin (always allowed) that may call the dashboard routes from a browser")),
  },
  { additionalProperties: false, description: "the custom dashboard's OpenID Connect provider (docs/dashboards.md); absent: the project has no dashboard" },
);

export const DashboardMemberSpec = Type.Object(
  {
    project: Reference('Project', 'the Project in this namespace whose dashboard the member opens'),
    subject: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "the provider's subject (sub) of the person" })),
    email: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 320,
        pattern: '^[^@\\s]+@[^@\\s]+$',
        description: 'matched only when the provider asserts it with email_verified',
      }),
    ),
    disabled: Type.Optional(Type.Boolean({ default: false, description: 'a closed account: refused at sign-in and on every call' })),
    environments: Type.Array(
      Type.Object(
        {
          environment: EnvironmentReference('a GameEnvironment of the project, in this namespace'),
          permissions: Type.Array(DashboardPermissionSchema, {
            minItems: 1,
            maxItems: DASHBOARD_PERMISSIONS.length,
            uniqueItems: true,
            description: '`open_dashboard` (sign-in, the session, the config and flags reads), `view_players` (GET /players)',
          }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100, description: 'the environments the member may open, each with its permissions there' },
    ),
  },
  {
    additionalProperties: false,
    ...celRules({ rule: 'has(self.subject) || has(self.email)', message: 'a member is named by subject or email', fieldPath: '.subject' }),
  },
);

export type DashboardSettings = Static<typeof DashboardSettingsSpec>;
export type DashboardMemberSpecT = Static<typeof DashboardMemberSpec>;
