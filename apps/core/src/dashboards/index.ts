/** @hearth/core/dashboards: what the other workspaces import of dashboards/ (docs/architecture.md "How an area plugs in"). */
export { dashboardSecretsFrom, secretVariableOf, type DashboardSecretSource } from './secrets';
export type { DashboardHosting, DashboardService } from './service';
export { DASHBOARD_TOKEN_AUDIENCE, DASHBOARD_TOKEN_TYP, looksLikeDashboardToken } from './tokens';
