/**
 * What the leader knows of some of the objects it reconciles, a value per object and per kind (the
 * reason an object is not Ready, when a deleted object's clean-up began), for gauges computed at
 * scrape time. The controller keeps it current: each reconcile notes or forgets its object, a fresh
 * list forgets what was deleted while no watch ran, and a replica that stops leading forgets it all.
 */
export class ObjectsByKind<V> {
  /** kind → object key → its value. */
  protected readonly byKind = new Map<string, Map<string, V>>();

  protected note(kind: string, key: string, value: V): void {
    let objects = this.byKind.get(kind);
    if (!objects) this.byKind.set(kind, (objects = new Map()));
    objects.set(key, value);
  }

  /** An object that is gone, or that no longer counts. */
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
