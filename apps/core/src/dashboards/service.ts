/**
 * Custom dashboards (spec §4, §5): a person's sign-in through the project's OpenID Connect provider,
 * the dashboard token it answers, that token's standing on every call, and the reads only a dashboard
 * makes. docs/dashboards.md tells the whole.
 */
import type { Db, Queryable } from '../db/knex';
import { Refusal, refuse } from '../errors';
import type { CursorCodec, Page } from '../pagination';
import type { CodeExchange, DashboardPlayer, DashboardSession, DashboardTokens, PlayerSearchQuery } from '../shapes/dashboards';
import { DASHBOARD_TOKEN_SECONDS, type DashboardPermission } from '../contract/dashboards';
import type { TokenService } from '../auth/tokens';
import type { DashboardPrincipal } from '../auth/authenticate';
import type { EnvironmentContext } from '../tenancy/environments';
import type { EnvironmentRegistry } from '../tenancy/registry';
import { accessOf, memberFor, type MemberAccess } from './members';
import { listPlayers } from './players';
import { DashboardProviders } from './provider';
import type { DashboardSecretSource } from './secrets';
import { type ProjectSecretKeys, storedProjectSecret } from '../tenancy/project-secrets';
import { issueDashboardToken, looksLikeDashboardToken, verifyDashboardToken } from './tokens';

/** Who calls with a dashboard token: a member account, with what it may do in the environment now. */
export interface DashboardHosting {
  /** The deployment setting HEARTH_DASHBOARDS: false, and sign-ins answer 503 unavailable. */
  hosted: boolean;
  secrets: DashboardSecretSource;
}

export class DashboardService {
  private readonly providers = new DashboardProviders();

  constructor(
    private readonly pool: Db,
    private readonly tokens: TokenService,
    private readonly environments: EnvironmentRegistry,
    private readonly cursors: CursorCodec,
    private readonly hosting: DashboardHosting,
    private readonly secretKeys: ProjectSecretKeys,
  ) {}

  /**
   * The environment a sign-in names, refused before anything is exchanged: `unavailable` where this
   * deployment hosts no custom dashboards, `not-found` where no environment has the app key or its
   * project has no dashboard.
   */
  async environmentForSignIn(appKey: string): Promise<EnvironmentContext> {
    if (!this.hosting.hosted) throw refuse.unavailable('This deployment hosts no custom dashboards.');
    const env = await this.environments.byAppKey(appKey);
    if (!env) throw new Refusal('not-found', `No environment has the app key "${appKey}".`, { field: 'appKey' });
    if (!env.dashboard) throw new Refusal('not-found', `The project of app key "${appKey}" has no dashboard.`, { field: 'appKey' });
    return env;
  }

  /**
   * Exchanges the code at the project's provider, maps the person to a member of the project and
   * answers a dashboard token of the environment. `forbidden`: nobody the project knows, a disabled
   * member, or one without `open_dashboard` in this environment.
   */
  async signIn(db: Queryable, env: EnvironmentContext, input: CodeExchange): Promise<DashboardTokens> {
    const settings = env.dashboard;
    if (!settings) throw refuse.notFound("The environment's project dashboard");
    let clientSecret: string | undefined;
    if (settings.clientSecretRef) {
      // From the Kubernetes Secret the Project names (the operator carried it here), else from this process's files or variables.
      clientSecret =
        (await storedProjectSecret(db, this.secretKeys, env.project.id, 'dashboardClientSecret')) ??
        (await this.hosting.secrets.read(env.namespace, settings.clientSecretRef.secretKeyRef));
      if (clientSecret === undefined) throw refuse.unavailable("The dashboard's client secret is not set up on this deployment.");
    }
    const person = await this.providers.exchange(settings, clientSecret, input);
    const member = await memberFor(db, env.project.id, env.id, person);
    if (!member) throw refuse.forbidden('This person is not a member of the project dashboard.');
    const barred = whyBarred(member);
    if (barred) throw refuse.forbidden(barred);
    const accessToken = await issueDashboardToken(this.tokens, member.accountId, env.appKey);
    return { accessToken, expiresIn: DASHBOARD_TOKEN_SECONDS, appKey: env.appKey, permissions: member.permissions };
  }

  /**
   * A dashboard token's caller, or null when the token is not a genuine, unexpired one of a live
   * environment. The member is read now, on every call: a removed or disabled member holds no
   * permission (every route then answers `forbidden`).
   */
  /** Whether a credential is meant as a dashboard token (the Authenticator sends those here). */
  claims(credential: string): boolean {
    return looksLikeDashboardToken(credential);
  }

  async authenticate(credential: string): Promise<DashboardPrincipal | null> {
    const claims = await verifyDashboardToken(this.tokens, credential);
    if (!claims) return null;
    const environment = await this.environments.byAppKey(claims.game);
    if (!environment) return null;
    const member = environment.dashboard ? await accessOf(this.pool, claims.sub, environment.id) : null;
    const permissions = member && !whyBarred(member) ? member.permissions : [];
    return { kind: 'dashboard', accountId: claims.sub, permissions, environment };
  }

  session(principal: DashboardPrincipal): DashboardSession {
    return { appKey: principal.environment.appKey, account: { id: principal.accountId }, permissions: principal.permissions };
  }

  listPlayers(db: Queryable, env: EnvironmentContext, search: PlayerSearchQuery): Promise<Page<DashboardPlayer>> {
    return listPlayers(db, this.cursors, env, search);
  }
}

/** Why a member may not open the dashboard in the environment (a closed account, no open_dashboard there), or null when they may. */
function whyBarred(member: MemberAccess): string | null {
  if (member.disabled) return 'This member account is closed.';
  if (!member.permissions.includes('open_dashboard')) return 'This member may not open the dashboard in this environment.';
  return null;
}
