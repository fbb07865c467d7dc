import { Type } from '@sinclair/typebox';

/**
 * A Kubernetes object name (RFC 1123 subdomain): what `metadata.name` holds and what `spec.*` fields
 * naming another document (`spec.environment`, `spec.project`, `spec.plan`) hold.
 */
export const ResourceName = Type.String({ minLength: 1, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' });
