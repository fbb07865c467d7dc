/**
 * hearth_operator_terminating_objects{kind} and hearth_operator_terminating_oldest_seconds{kind}:
 * hearth.gg objects being deleted (a deletionTimestamp) that still carry Hearth's cleanup finalizer,
 * and how long the oldest of them has waited, counted from its deletionTimestamp. Kubernetes keeps
 * such an object, and the namespace it is in, until the operator has undone what it made and taken
 * the finalizer off; one that stays (Hearth refuses the deletion yet, the database is out of reach)
 * holds a namespace in Terminating, which HearthCleanupStuck reports. Only the leader reconciles, so
 * only the leader's figures are non-zero; the age is computed at each scrape.
 */
import type { MetricDeclarations } from '@hearth/core/process';
import { hasFinalizer } from './finalizers';
import type { CustomObject } from './kube';
import { ObjectsByKind } from './objects-by-kind';

/** The deleted objects still awaiting clean-up, by kind, each with its deletionTimestamp (milliseconds). */
export class TerminatingObjects extends ObjectsByKind<number> {
  constructor(
    declare: MetricDeclarations,
    private readonly now: () => number = Date.now,
  ) {
    super();
    const byKind = this.byKind;
    declare.gauge(
      'hearth_operator_terminating_objects',
      "hearth.gg objects being deleted whose clean-up has not finished (they still carry Hearth's finalizer), by kind (the leader reports them)",
      ['kind'],
      function collect() {
        this.reset();
        for (const [kind, objects] of byKind) this.set({ kind }, objects.size);
      },
    );
    const clock = () => this.now();
    declare.gauge(
      'hearth_operator_terminating_oldest_seconds',
      "Seconds since the deletion of the oldest hearth.gg object still waiting for Hearth's clean-up, by kind (0: none)",
      ['kind'],
      function collect() {
        this.reset();
        const now = clock();
        for (const [kind, objects] of byKind) {
          const first = Math.min(...objects.values());
          this.set({ kind }, objects.size ? Math.max(0, now - first) / 1000 : 0);
        }
      },
    );
  }

  /**
   * An object as a reconcile read it: counted while it is deleted and still carries the finalizer;
   * forgotten once it does not (the clean-up finished, or someone took the finalizer off).
   */
  follow(kind: string, key: string, obj: CustomObject): void {
    const deletedAt = obj.metadata.deletionTimestamp ? Date.parse(obj.metadata.deletionTimestamp) : NaN;
    if (Number.isNaN(deletedAt) || !hasFinalizer(obj)) return this.forget(kind, key);
    this.note(kind, key, deletedAt);
  }
}
