/**
 * The Secrets the operator watches, by label (the same list-then-watch loop as the hearth.gg
 * resources, watch.ts), so that what happens to a Secret reaches the resource it belongs to within
 * seconds instead of at the next relist:
 *   - the key Secrets it writes (`app.kubernetes.io/managed-by=hearth-operator`): a change or a
 *     deletion reconciles the ServerKey or LicenceKey its label names (`hearth.gg/server-key`,
 *     `hearth.gg/licence-key`), whose status then says SecretDeleted or SecretMissing;
 *   - the Secrets that opted in to be read for a Project (`hearth.gg/secret-for=<project>`): a new
 *     value, the label added or taken away, the Secret created or deleted reconciles that Project.
 * A watch only queues keys: each reconcile reads what it needs afresh. Kubernetes RBAC cannot limit
 * `list` and `watch` to a label, so the Role grants them on every Secret of a watched namespace; these
 * selectors are what the operator asks for, and a Secret's value is used only after its label is
 * checked (project-secrets.ts).
 */
import type { Logger } from '@hearth/core';
import type { ManifestKind } from '@hearth/core/manifests';
import type { KubeClients } from './kube';
import { SECRET_FOR_LABEL } from './project-secrets';
import { KEY_SECRET_KINDS, MANAGED_BY, MANAGED_BY_LABEL } from './server-key';
import { ResourceWatch, type WatchSource, type WatchedObject } from './watch';

/** Secrets of one label selector, in one namespace or all. */
export class SecretSource implements WatchSource {
  constructor(
    private readonly kube: KubeClients,
    readonly labelSelector: string,
  ) {}

  async list(namespace?: string): Promise<{ items: WatchedObject[]; resourceVersion: string }> {
    const labelSelector = this.labelSelector;
    const list = namespace
      ? await this.kube.core.listNamespacedSecret({ namespace, labelSelector })
      : await this.kube.core.listSecretForAllNamespaces({ labelSelector });
    // Only what a watch reports (name, namespace, labels): the values are read afresh by the reconcile that needs them.
    const items = list.items.map((s) => ({
      metadata: { name: s.metadata?.name ?? '', namespace: s.metadata?.namespace, labels: s.metadata?.labels, resourceVersion: s.metadata?.resourceVersion },
    }));
    return { items, resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  path(namespace?: string): string {
    return namespace ? `/api/v1/namespaces/${namespace}/secrets` : '/api/v1/secrets';
  }
}

export const KEY_SECRET_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
export const PROJECT_SECRET_SELECTOR = SECRET_FOR_LABEL;

/** The resources a Secret belongs to (kind and `namespace/name`), from its labels. */
export function ownersOf(secret: WatchedObject): { kind: ManifestKind; key: string }[] {
  const { namespace, labels = {} } = secret.metadata;
  if (!namespace) return [];
  const owners: { kind: ManifestKind; key: string }[] = [];
  if (labels[MANAGED_BY_LABEL] === MANAGED_BY) {
    for (const [kind, { label }] of Object.entries(KEY_SECRET_KINDS)) {
      if (labels[label]) owners.push({ kind: kind as ManifestKind, key: `${namespace}/${labels[label]}` });
    }
  }
  if (labels[SECRET_FOR_LABEL]) owners.push({ kind: 'Project', key: `${namespace}/${labels[SECRET_FOR_LABEL]}` });
  return owners;
}

/** The two Secret watches, per watched namespace (every namespace when unset); each event queues the Secret's owners. */
export function secretWatches(
  kube: KubeClients,
  options: {
    namespaces?: string[];
    relistIntervalMs: number;
    logger: Logger;
    onOwner(kind: ManifestKind, key: string): void;
    onRestart?(reason: string): void;
  },
): ResourceWatch[] {
  const namespaces: (string | undefined)[] = options.namespaces?.length ? options.namespaces : [undefined];
  const watches: ResourceWatch[] = [];
  for (const selector of [KEY_SECRET_SELECTOR, PROJECT_SECRET_SELECTOR]) {
    const source = new SecretSource(kube, selector);
    const logger = options.logger.child({ kind: 'Secret', selector });
    for (const namespace of namespaces) {
      watches.push(
        new ResourceWatch(kube, source, {
          namespace,
          relistIntervalMs: options.relistIntervalMs,
          onKey: (_key, secret) => {
            for (const { kind, key } of ownersOf(secret)) options.onOwner(kind, key);
          },
          onRestart: (reason) => options.onRestart?.(reason),
          logger,
        }),
      );
    }
  }
  return watches;
}
