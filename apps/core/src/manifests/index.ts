/** @hearth/core/manifests: what the other workspaces import of manifests/ (docs/architecture.md "How an area plugs in"). */
export * from './kind';
export * from './manifest-error';
export * from './schemas';
export * from './references';
export * from './status';
export * from './crds';
export * from './identity-fields';
export * from './spec-fields';
export * from './validate';
export * from './reconciler';
export * from './reconcile';
export * from './apply';
// Reading only: the documents are recorded by reconcileManifest and removeManifest.
export {
  type AppliedManifest,
  type AppliedStatus,
  type ManifestLink,
  appliedManifestElsewhere,
  appliedManifestLinks,
  listAppliedManifests,
  manifestYaml,
} from './documents';
