/**
 * How a document is named where it is refused: its label in messages, its namespace when it names
 * none, and ManifestError, the refusal that names it. Every kind's reconciler uses these, so they
 * stand apart from the list of kinds (schemas.ts), which imports every reconciler.
 */
import type { ErrorCode } from '../errors';

/**
 * A document refused: by its schema, or by a rule of the database it is reconciled into. `code` is
 * the refusal's code from the spec's list, as the domain threw it: `not-found` for a reference to a
 * document that does not exist, `quota-exceeded` for a plan's limit, `invalid-request` for a document
 * its schema refuses; what reads it (the operator's Ready reasons) decides by it, never by the wording.
 */
export class ManifestError extends Error {
  constructor(
    readonly document: string,
    readonly field: string,
    readonly reason: string,
    readonly code: ErrorCode = 'invalid-request',
  ) {
    super(`${document}: ${field} ${reason}`);
    this.name = 'ManifestError';
  }
}

/** Outside Kubernetes, a namespaced document that names no namespace is in this one. */
export const DEFAULT_NAMESPACE = 'default';

/** The document as messages name it: `file.yaml#2 Project starfall/starfall`. */
export function describeDocument(doc: unknown, origin?: string): string {
  const d = doc as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
  const kind = typeof d?.kind === 'string' ? d.kind : 'document';
  const name = typeof d?.metadata?.name === 'string' ? d.metadata.name : '(unnamed)';
  const ns = typeof d?.metadata?.namespace === 'string' ? `${d.metadata.namespace}/` : '';
  return `${origin ? `${origin} ` : ''}${kind} ${ns}${name}`;
}
