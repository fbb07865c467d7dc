/** @hearth/core/tenancy: what the other workspaces import of tenancy/ (docs/architecture.md "How an area plugs in"). */
export * from './environments';
export * from './registry';
export * from './origins';
export * from './catalog';
export * from './access';
export * from './organisations';
export { projectSecretPublicKey, sealProjectSecret, storeProjectSecret, type ProjectSecretName, type ProjectSecretOrigin } from './project-secrets';
