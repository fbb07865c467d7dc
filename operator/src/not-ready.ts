/**
 * hearth_operator_objects_not_ready{kind, reason}: the objects whose Ready condition is not True, by
 * the reason the operator wrote (PlanLimit, MissingReference, InvalidSpec, Retrying…). Reconcile
 * counters only say how often something failed; an object refused once and then left alone (a plan
 * limit reached) shows only here, so its alert (HearthObjectsNotReady) sees it for as long as it lasts.
 * Only the leader reconciles, so only the leader's figures are non-zero.
 */
import client from 'prom-client';

export class NotReadyObjects {
  /** kind → object key → the reason of its Ready condition (only those not True). */
  private readonly byKind = new Map<string, Map<string, string>>();

  constructor(registry: client.Registry) {
    const byKind = this.byKind;
    const gauge: client.Gauge<'kind' | 'reason'> = new client.Gauge({
      name: 'hearth_operator_objects_not_ready',
      help: 'hearth.gg objects whose Ready condition is not True, by kind and reason (the leader reports them)',
      labelNames: ['kind', 'reason'] as const,
      registers: [registry],
      collect() {
        gauge.reset();
        for (const [kind, objects] of byKind) {
          for (const reason of objects.values()) gauge.inc({ kind, reason });
        }
      },
    });
  }

  /** The Ready condition just written (or found unchanged) for an object. */
  observe(kind: string, key: string, ready: { status: string; reason: string }): void {
    if (ready.status === 'True') return this.forget(kind, key);
    let objects = this.byKind.get(kind);
    if (!objects) this.byKind.set(kind, (objects = new Map()));
    objects.set(key, ready.reason);
  }

  /** An object that is gone, or removed. */
  forget(kind: string, key: string): void {
    this.byKind.get(kind)?.delete(key);
  }

  /** A fresh list of a kind: forget the objects `stillThere` says are gone (deleted while no watch ran). */
  retain(kind: string, stillThere: (key: string) => boolean): void {
    const objects = this.byKind.get(kind);
    if (!objects) return;
    for (const key of objects.keys()) if (!stillThere(key)) objects.delete(key);
  }

  /** A replica that no longer leads knows nothing current. */
  clear(): void {
    this.byKind.clear();
  }
}
