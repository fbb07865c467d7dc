/**
 * What the operator writes into a Hearth resource's `status` (the CRDs declare it from these
 * schemas): the generation it last acted on and a `Ready` condition, in the shape of Kubernetes'
 * metav1.Condition so kubectl, Argo CD and Flux read it like any other resource's.
 */
import { type Static, type TProperties, Type } from '@sinclair/typebox';

export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

export const Condition = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 316, description: 'the condition: Ready' }),
  status: Type.Union(
    CONDITION_STATUSES.map((s) => Type.Literal(s)),
    { description: 'True, False or Unknown' },
  ),
  reason: Type.String({ minLength: 1, maxLength: 1024, description: 'one CamelCase word a program can act on' }),
  message: Type.String({ maxLength: 32768, description: 'what a person should know' }),
  lastTransitionTime: Type.String({ format: 'date-time', description: 'when status last changed' }),
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0, description: 'the generation this condition describes' })),
});
export type Condition = Static<typeof Condition>;

/** The status every kind has, plus what a kind adds (a ServerKey's key id and Secret). */
export function resourceStatus(extra: TProperties = {}) {
  return Type.Object(
    {
      observedGeneration: Type.Optional(Type.Integer({ minimum: 0, description: 'the generation the operator last reconciled' })),
      conditions: Type.Optional(Type.Array(Condition, { maxItems: 16, description: 'Ready: whether the database matches the spec, and why not' })),
      ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, Type.Optional(v)])),
    },
    { description: 'what the operator last saw (written by it; docs/kubernetes.md)' },
  );
}
