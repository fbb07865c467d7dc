/**
 * Leader election on a coordination.k8s.io/v1 Lease, the algorithm of client-go's leaderelection:
 * every retry period a candidate reads the Lease; it takes it when nobody holds it, when it was
 * released, or when the holder's record has not changed for a whole lease duration as this replica
 * observed it (its own clock only, so clock skew between nodes does not matter); the holder renews
 * it. Every write carries the resourceVersion it read, so two candidates never both win (one gets
 * 409). A leader that cannot renew within the renew deadline (shorter than the lease duration) stops
 * leading at once, before anyone else may take over; `release()` on a clean exit hands it over.
 */
import type { Logger } from '@hearth/core';
import type { K8s, KubeClients } from './kube';
import { describeError, isConflict, isNotFound } from './kube';

export interface LeaderOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** MicroTime as the API server parses it (RFC 3339 with six fraction digits). */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** A Lease's times as read (client-node may hand back a Date or a string) written back in MicroTime form. */
function asMicro(value: unknown): string | undefined {
  return value === undefined || value === null ? undefined : microTime(new Date(value as string | Date));
}

export class LeaderElector {
  private leading = false;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  /** The record last read, and when (on this clock) it last changed. */
  private observed?: { record: string; at: number };
  private lastRenew = 0;
  /** When the API server last answered a lease round (readiness). */
  lastContact = 0;

  constructor(
    private readonly kube: KubeClients,
    private readonly options: LeaderOptions,
    private readonly callbacks: { onStartedLeading(): void; onStoppedLeading(): void },
    private readonly logger: Logger,
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    void this.round();
  }

  /** Stops competing; as the holder, gives the Lease up so another replica takes over at once. */
  async release(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (!this.leading) return;
    this.leading = false;
    try {
      const lease = await this.read();
      if (lease?.spec?.holderIdentity !== this.options.identity) return;
      lease.spec = {
        ...lease.spec,
        holderIdentity: undefined,
        leaseDurationSeconds: 1,
        acquireTime: asMicro(lease.spec.acquireTime) as never,
        renewTime: microTime(new Date()) as never,
      };
      await this.kube.coordination.replaceNamespacedLease({ name: this.options.name, namespace: this.options.namespace, body: lease });
      this.logger.info({ lease: this.options.name }, 'released the lease');
    } catch (err) {
      this.logger.warn({ err: describeError(err) }, 'could not release the lease (another replica takes over when it expires)');
    }
  }

  private async read(): Promise<K8s.V1Lease | null> {
    try {
      return await this.kube.coordination.readNamespacedLease({ name: this.options.name, namespace: this.options.namespace });
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    let held = false;
    try {
      held = await this.tryAcquireOrRenew();
      this.lastContact = Date.now();
    } catch (err) {
      this.logger.warn({ err: describeError(err) }, 'lease round failed');
    }
    if (this.stopped) return;
    if (held) {
      this.lastRenew = Date.now();
      if (!this.leading) {
        this.leading = true;
        this.logger.info({ lease: this.options.name, identity: this.options.identity }, 'became the leader');
        this.callbacks.onStartedLeading();
      }
    } else if (this.leading && Date.now() - this.lastRenew >= this.options.renewDeadlineMs) {
      this.leading = false;
      this.logger.error({ lease: this.options.name }, 'lost the lease: reconciling stops');
      this.callbacks.onStoppedLeading();
      return;
    }
    this.timer = setTimeout(() => void this.round(), this.options.retryPeriodMs);
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const { namespace, name, identity, leaseDurationSeconds } = this.options;
    const lease = await this.read();
    if (!lease) {
      try {
        await this.kube.coordination.createNamespacedLease({
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds,
              acquireTime: microTime(now) as never,
              renewTime: microTime(now) as never,
              leaseTransitions: 0,
            },
          },
        });
        return true;
      } catch (err) {
        if (isConflict(err)) return false; // another replica created it first
        throw err;
      }
    }
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseDurationSeconds]);
    if (this.observed?.record !== record) this.observed = { record, at: now.getTime() };
    const holder = spec.holderIdentity;
    const mine = holder === identity;
    const expired = this.observed.at + (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000 <= now.getTime();
    if (holder && !mine && !expired) return false;
    lease.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds,
      acquireTime: (mine ? asMicro(spec.acquireTime) : microTime(now)) as never,
      renewTime: microTime(now) as never,
      leaseTransitions: mine ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
    };
    try {
      await this.kube.coordination.replaceNamespacedLease({ name, namespace, body: lease });
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }
}
