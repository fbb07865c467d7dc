import { Type } from '@sinclair/typebox';

/**
 * A Kubernetes object name (RFC 1123 subdomain): what `metadata.name` holds and what `spec.*` fields
 * naming another document (`spec.environment`, `spec.project`, `spec.plan`) hold.
 */
export const ResourceName = Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' });

/** The keyword of a field naming another document: the kind it names (`Reference`). */
export const REFERENCE_KEYWORD = 'x-hearth-reference';

/**
 * A `spec.*` field naming another document of the same namespace (a cluster-scoped Plan: by its
 * name alone): a ResourceName that says which kind it names, so the operator reconciles the
 * documents naming an object again when that object changes or goes (docs/kubernetes.md).
 */
export const Reference = (kind: string, description: string) => Type.String({ ...ResourceNameOptions(), description, [REFERENCE_KEYWORD]: kind });

function ResourceNameOptions() {
  const { minLength, maxLength, pattern } = ResourceName;
  return { minLength, maxLength, pattern };
}

/** The field naming the GameEnvironment a document belongs to (most content kinds have it). */
export const EnvironmentReference = (description = 'the GameEnvironment of this namespace it belongs to') => Reference('GameEnvironment', description);
