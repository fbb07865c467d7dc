/**
 * The status every hearth.gg resource carries (what the CRDs declare): `observedGeneration` and
 * typed conditions, one of type `Ready`, with Kubernetes' condition semantics: lastTransitionTime
 * moves only when the condition's status flips.
 */
import { sameJson } from '@hearth/core';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  /** CamelCase, for machines: Reconciled, InvalidSpec, Refused, Retrying, SecretMissing… */
  reason: string;
  /** For people: what happened and, for a refusal, which field and why. */
  message: string;
  /** RFC 3339. */
  lastTransitionTime: string;
  observedGeneration: number;
}

export interface ResourceStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  [field: string]: unknown;
}

export const READY = 'Ready';

/** The condition list with `next` in place of its type's condition; the transition time kept when the status did not flip. */
export function setCondition(conditions: Condition[] | undefined, next: Omit<Condition, 'lastTransitionTime'>, now: Date = new Date()): Condition[] {
  const list = conditions ?? [];
  const previous = list.find((c) => c.type === next.type);
  const lastTransitionTime = previous && previous.status === next.status ? previous.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return [...list.filter((c) => c.type !== next.type), { ...next, lastTransitionTime }];
}

/** The condition of one type, if any. */
export function conditionOf(status: ResourceStatus | undefined, type: string): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * The status to write: `current` with observedGeneration, the Ready condition and the extra fields
 * (a ServerKey's keyId and secretName) set. Fields other writers keep are left alone.
 */
export function nextStatus(
  current: ResourceStatus | undefined,
  generation: number,
  ready: { status: ConditionStatus; reason: string; message: string },
  extra: Record<string, unknown> = {},
  now: Date = new Date(),
): ResourceStatus {
  return {
    ...(current ?? {}),
    ...extra,
    observedGeneration: generation,
    conditions: setCondition(current?.conditions, { type: READY, ...ready, observedGeneration: generation }, now),
  };
}

/** Whether writing `next` would change anything (a status write wakes every watcher, so none is made for nothing). */
export function sameStatus(a: ResourceStatus | undefined, b: ResourceStatus): boolean {
  return sameJson(a ?? {}, b);
}
