/**
 * What the custom-dashboard tests share: a project's dashboard settings, DashboardMember documents,
 * and a dashboard token minted as POST /auth/dashboard mints it (for suites that test what a token
 * reaches, not the sign-in: test/dashboards/sign-in.test.ts signs in through a real provider).
 */
import type { HearthCore } from '@hearth/core/hearth';
import { API_VERSION, type AnyManifest } from '@hearth/core/manifests';
import type { Db } from '@hearth/core/db';
import { issueDashboardToken } from '../../apps/core/src/dashboards/tokens';
import { NAMESPACE } from './manifests';

export const DASHBOARD_CLIENT = { clientId: 'hearth-dashboard', clientSecret: 'dashboard-client-secret', redirectUri: 'https://dashboard.example/callback' };

/** Project.spec.dashboard naming `issuer`, its client secret in Secret `dashboard-oidc` key `client-secret`. */
export function dashboardSettings(issuer: string, overrides: Record<string, unknown> = {}) {
  return {
    issuer,
    clientId: DASHBOARD_CLIENT.clientId,
    redirectUri: DASHBOARD_CLIENT.redirectUri,
    clientSecretRef: { secretKeyRef: { name: 'dashboard-oidc', key: 'client-secret' } },
    ...overrides,
  };
}

export function dashboardMember(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'DashboardMember', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

/** The account id of a DashboardMember document (what a token's `sub` and the session's account.id are). */
export async function accountIdOf(db: Db, memberName: string): Promise<string> {
  const row = await db('dashboard_members').where({ manifest_namespace: NAMESPACE, manifest_name: memberName }).first('id');
  if (!row) throw new Error(`no DashboardMember ${memberName}`);
  return row.id as string;
}

/** A dashboard token of the member's account in the environment of `appKey`, signed by the API's keys. */
export async function mintDashboardToken(core: HearthCore, db: Db, memberName: string, appKey: string): Promise<string> {
  return issueDashboardToken(core.tokens, await accountIdOf(db, memberName), appKey);
}
