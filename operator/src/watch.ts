/**
 * List, then watch from the list's resourceVersion, for one resource type; start over with a fresh
 * list on 410 Gone (the version is too old), after a failure, and every `relistIntervalMs`, so the
 * state, not single events, drives reconciles. It reports keys, not objects: the controller reads
 * each object afresh when it reconciles it. Nothing it calls back can crash the process: a throwing
 * callback is logged and the loop goes on.
 */
import type { Logger } from '@hearth/core';
import { type KubeClients, describeError, statusOf } from './kube';

/** What a watch reads: hearth.gg resources (CustomResources) or Secrets of a label (SecretSource). */
export interface WatchSource {
  list(namespace?: string): Promise<{ items: WatchedObject[]; resourceVersion: string }>;
  /** The watch path (list + ?watch), of one namespace when given. */
  path(namespace?: string): string;
  /** A label selector the watch's list and events are limited to. */
  labelSelector?: string;
}

/** What a watch reports of an object: its name, namespace and labels (a Secret's tell whose it is). */
export interface WatchedObject {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; resourceVersion?: string };
}

export interface WatchOptions {
  namespace?: string;
  relistIntervalMs: number;
  /**
   * Every object seen (listed, added, changed or deleted): its key, and the object (for a deletion,
   * or an object that no longer matches the label selector, its last state).
   */
  onKey(key: string, obj: WatchedObject): void;
  /** Each fresh list, with the keys it holds (to forget what disappeared while the watch was down). */
  onList?(keys: string[]): void;
  onRestart?(reason: 'relist' | 'gone' | 'error' | 'closed'): void;
  /** Logs already naming the kind (the controller's child logger). */
  logger: Logger;
}

/** `namespace/name`, or `name` for a cluster-scoped object. */
export function keyOf(obj: { metadata: { name: string; namespace?: string } }): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}

export function refOf(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

const RETRY_MS = [500, 1000, 2000, 5000, 10_000];

export class ResourceWatch {
  private abort?: AbortController;
  private stopped = false;
  private running?: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly kube: KubeClients,
    private readonly resources: WatchSource,
    private readonly options: WatchOptions,
  ) {}

  start(): void {
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    this.wake?.();
    await this.running;
  }

  private safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.options.logger.error({ err }, `watch callback failed (${what})`);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let reason: 'relist' | 'gone' | 'error' | 'closed';
      try {
        reason = await this.listAndWatch();
        failures = 0;
      } catch (err) {
        reason = statusOf(err) === 410 ? 'gone' : 'error';
        if (reason === 'error') {
          failures += 1;
          this.options.logger.warn({ err: describeError(err) }, 'list or watch failed; starting over');
        }
      }
      if (this.stopped) return;
      this.safely('restart', () => this.options.onRestart?.(reason));
      if (failures > 0) await this.sleep(RETRY_MS[Math.min(failures, RETRY_MS.length) - 1]);
    }
  }

  /**
   * One list, then one watch from its version until the relist interval ends it (the answer),
   * the server closes it, or an event says 410 Gone. Watches the server ends (timeoutSeconds) are
   * resumed from the last version seen without a new list.
   */
  private async listAndWatch(): Promise<'relist' | 'gone' | 'closed'> {
    const { items, resourceVersion } = await this.resources.list(this.options.namespace);
    this.safely('list', () => this.options.onList?.(items.map(keyOf)));
    for (const obj of items) this.safely('list', () => this.options.onKey(keyOf(obj), obj));
    let version = resourceVersion;
    const relistAt = Date.now() + this.options.relistIntervalMs;
    const { Watch } = this.kube.lib;
    const watch = new Watch(this.kube.config);
    while (!this.stopped) {
      const remaining = relistAt - Date.now();
      const started = Date.now();
      if (remaining <= 0) return 'relist';
      const outcome = await new Promise<'closed' | 'gone' | 'relist'>((resolve, reject) => {
        let gone = false;
        const timer = setTimeout(() => {
          this.abort?.abort();
          resolve('relist');
        }, remaining);
        watch
          .watch(
            this.resources.path(this.options.namespace),
            // Bookmarks keep the version fresh on a quiet resource, so a resumed watch is rarely 410.
            {
              resourceVersion: version,
              allowWatchBookmarks: true,
              timeoutSeconds: Math.max(1, Math.min(300, Math.ceil(remaining / 1000))),
              ...(this.resources.labelSelector ? { labelSelector: this.resources.labelSelector } : {}),
            },
            (type: string, obj: WatchedObject & { code?: number }) => {
              if (type === 'ERROR') {
                // A Status object: 410 when `version` is older than the server keeps.
                gone = obj?.code === 410;
                this.abort?.abort();
                return;
              }
              if (obj?.metadata?.resourceVersion) version = obj.metadata.resourceVersion;
              if (type === 'BOOKMARK') return;
              this.safely(type, () => this.options.onKey(keyOf(obj), obj));
            },
            (err: unknown) => {
              clearTimeout(timer);
              if (gone) resolve('gone');
              else if (err && (err as Error).name !== 'AbortError') reject(err);
              else resolve('closed');
            },
          )
          .then((controller) => {
            this.abort = controller;
            if (this.stopped) controller.abort();
          }, reject);
      });
      if (outcome !== 'closed') return outcome;
      // A watch the server closed at once (not its timeoutSeconds): no tight loop.
      if (Date.now() - started < 1000) await this.sleep(1000);
    }
    return 'closed';
  }
}
