/**
 * hearth_operator_objects_not_ready{kind, reason}: the objects whose Ready condition is not True, by
 * the reason the operator wrote (PlanLimit, MissingReference, InvalidSpec, Retrying…). Reconcile
 * counters only say how often something failed; an object refused once and then left alone (a plan
 * limit reached) shows only here, so its alert (HearthObjectsNotReady) sees it for as long as it lasts.
 * Only the leader reconciles, so only the leader's figures are non-zero.
 */
import type { MetricDeclarations } from '@hearth/core/process';
import { ObjectsByKind } from './objects-by-kind';

export class NotReadyObjects extends ObjectsByKind<string> {
  constructor(declare: MetricDeclarations) {
    super();
    const byKind = this.byKind;
    declare.gauge(
      'hearth_operator_objects_not_ready',
      'hearth.gg objects whose Ready condition is not True, by kind and reason (the leader reports them)',
      ['kind', 'reason'],
      function collect() {
        this.reset();
        for (const [kind, objects] of byKind) {
          for (const reason of objects.values()) this.inc({ kind, reason });
        }
      },
    );
  }

  /** The Ready condition just written (or found unchanged) for an object: noted by its reason while not True. */
  observe(kind: string, key: string, ready: { status: string; reason: string }): void {
    if (ready.status === 'True') return this.forget(kind, key);
    this.note(kind, key, ready.reason);
  }
}
