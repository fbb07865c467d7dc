/**
 * Kubernetes Events on hearth.gg resources (core/v1, what `kubectl describe` and `kubectl get
 * events` show): a Warning for each refusal an SRE must see (a bad reference, a plan's limit), a
 * Normal one when a ServerKey's key is minted. Recording is best effort: a failure is logged, never
 * retried, and never fails the reconcile.
 */
import type { Logger } from '@hearth/core';
import type { CustomObject, KubeClients } from './kube';
import { describeError } from './kube';

export const EVENT_SOURCE = 'hearth-operator';

export class EventRecorder {
  constructor(
    private readonly kube: KubeClients,
    private readonly identity: string,
    private readonly logger: Logger,
  ) {}

  async record(obj: CustomObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    // A cluster-scoped object's events live in "default", as kubectl looks for them.
    const namespace = obj.metadata.namespace ?? 'default';
    const now = new Date();
    try {
      await this.kube.core.createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${obj.metadata.name}.`, namespace },
          involvedObject: {
            apiVersion: obj.apiVersion,
            kind: obj.kind,
            name: obj.metadata.name,
            namespace: obj.metadata.namespace,
            uid: obj.metadata.uid,
            resourceVersion: obj.metadata.resourceVersion,
          },
          type,
          reason,
          message: message.slice(0, 1024),
          source: { component: EVENT_SOURCE },
          reportingComponent: `hearth.gg/${EVENT_SOURCE}`,
          reportingInstance: this.identity,
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    } catch (err) {
      this.logger.warn({ kind: obj.kind, name: obj.metadata.name, reason, err: describeError(err) }, 'could not record an event');
    }
  }
}
