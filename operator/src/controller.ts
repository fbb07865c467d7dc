/**
 * One controller per kind, the same code for every kind of MANIFEST_KINDS (a kind a later area adds
 * is reconciled by declaring its schema and reconciler): a watch feeds a serial queue of keys, and
 * each reconcile, kubebuilder's way, is idempotent and level-based:
 *   read the object afresh (gone: nothing to do);
 *   deleted: run removeManifest (the kind's clean-up), then take the finalizer off;
 *   else add the finalizer (removable kinds), validate the spec with the kind's TypeBox schema,
 *   reconcileManifest in one transaction (the functions `hearth apply` calls, which announce their
 *   changes on the bus once it commits), and write status: observedGeneration and a Ready condition.
 * A refusal (ManifestError: a bad reference, a plan's limit; a deletion Hearth cannot undo yet; or a
 * ReadyRefusal of the operator's own) is
 * Ready=False with its reason and message and a Warning Event, and is retried with backoff, and at
 * once when another resource changes (the plan a project waited for may just have been created); a
 * missing reference only once it has been missing for the grace (the same apply may be about to
 * create it). A change (or a deletion's clean-up) also reconciles again the objects naming what
 * changed (their Reference fields), so their status follows at once, not at the relist. The Secrets
 * a key resource owns or a Project opted in are watched too (secret-watch.ts): a change of one queues
 * its resource here.
 * Any other failure (the database down, the API server busy) is Ready=Unknown and retried with
 * backoff. Nothing here crashes the process.
 */
import { type Announcer, Refusal, type Logger } from '@hearth/core';
import { type Db, inTransaction } from '@hearth/core/db';
import {
  ManifestError,
  isRemovable,
  liveManifestNames,
  reconcileManifest,
  removeManifest,
  validateManifest,
  referencesOf,
  type AnyManifest,
  type DocumentRef,
  type ReconcileResult,
} from '@hearth/core/manifests';
import { liveKeyOfManifest } from '@hearth/core/auth';
import { liveLicenceKeyOfManifest } from '@hearth/core/licence';
import { projectSecretPublicKey, sealProjectSecret, storeProjectSecret } from '@hearth/core/tenancy';
import { PROJECT_SECRET_NAMES, projectSecretOf } from './project-secrets';
import { type Condition, type ConditionStatus, READY, conditionOf, nextStatus, sameStatus } from './conditions';
import { type EventRecorder } from './events';
import { FINALIZER, addFinalizer, hasFinalizer, removeFinalizer } from './finalizers';
import { type CustomObject, CustomResources, type KubeClients, type ObjectRef, type ResourceType, describeError, isNotFound, namespaceOf } from './kube';
import { type OperatorMetrics, type Outcome } from './metrics';
import { KeyedQueue, type WorkResult } from './queue';
import { ReadyRefusal } from './refusal';
import { KEY_SECRET_FINALIZER, isKeySecretKind, keySecretState, releaseKeySecret, secretNameOf, writeKeySecret } from './server-key';
import { ResourceWatch, refOf } from './watch';

export interface ControllerDeps {
  kube: KubeClients;
  db: Db;
  bus: Announcer;
  events: EventRecorder;
  metrics: OperatorMetrics;
  logger: Logger;
  /** The namespaces of a namespaced kind to watch (one watch each); unset: every namespace. */
  watchNamespaces?: string[];
  relistIntervalMs: number;
  concurrency: number;
  retry: { baseDelayMs: number; maxDelayMs: number };
  /**
   * How long a reference to a missing document is waited for before it is reported (Ready=False,
   * a Warning Event): kinds reconcile in parallel, so a folder applied at once names documents
   * not reconciled yet; the object is retried meanwhile, at once when the database changes.
   */
  referenceGraceMs: number;
  /**
   * Whether it writes the objects' status and adds and takes off their finalizer. False only for a
   * cluster-scoped kind (Plan) another release's operator owns: this one then follows it, making
   * its own database match each object without writing to the object, and retiring from it what
   * is deleted (when the deletion starts, when the object is gone, and what a fresh list no longer
   * holds). The owner's finalizer cannot wait for a follower's clean-up: a refusal there is this
   * operator's to report (its log and hearth_operator_objects_not_ready), retried like any other.
   */
  owner: boolean;
  /** The name its writes carry in the objects' managedFields. */
  fieldManager?: string;
  /**
   * Told when a reconcile changed the database, or a deletion undid what an object made: the
   * objects naming it (of every kind) and every refused object are tried again.
   */
  onChange(changed: DocumentRef): void;
}

/** The Ready=False reason of a ManifestError, by its code: a hint for machines; the message is exact. */
export function refusalReason(err: ManifestError): string {
  switch (err.code) {
    case 'not-found':
      return 'MissingReference';
    case 'quota-exceeded':
      return 'PlanLimit';
    case 'invalid-request':
      return 'InvalidSpec'; // a rule the schema could not express, or an identity field changed: fix the spec
    default:
      return 'Refused';
  }
}

const READY_MESSAGE = 'the database matches the spec';

interface Applied {
  result: ReconcileResult;
  /** Status fields besides the conditions (a ServerKey's keyId and secretName). */
  extra: Record<string, unknown>;
}

export class KindController {
  readonly queue: KeyedQueue;
  readonly resources: CustomResources;
  /** Keys last refused: tried again whenever the database changes. */
  private readonly refused = new Set<string>();
  /** What each object names (from its last reconcile): it is tried again when one of those changes. */
  private readonly referencing = new Map<string, DocumentRef[]>();
  /** Objects whose missing reference is not reported yet: since when it has been missing. */
  private readonly missingSince = new Map<string, number>();
  private readonly watches: ResourceWatch[];
  private readonly log: Logger;

  constructor(
    readonly type: ResourceType,
    private readonly deps: ControllerDeps,
  ) {
    const kind = type.kind;
    this.log = deps.logger.child({ kind });
    this.resources = new CustomResources(deps.kube, type, deps.fieldManager);
    this.queue = new KeyedQueue((key) => this.reconcile(key), {
      concurrency: deps.concurrency,
      ...deps.retry,
      onDepth: (depth) => deps.metrics.queueDepth.set({ kind }, depth),
      onError: (key, err) => this.log.error({ key, err }, 'reconcile threw'),
    });
    deps.metrics.observeQueue(kind, this.queue);
    // A cluster-scoped kind, or every namespace: one watch; else one per namespace, into one queue.
    const namespaces: (string | undefined)[] = type.namespaced && deps.watchNamespaces?.length ? deps.watchNamespaces : [undefined];
    this.watches = namespaces.map(
      (namespace) =>
        new ResourceWatch(deps.kube, this.resources, {
          namespace,
          relistIntervalMs: deps.relistIntervalMs,
          onKey: (key) => this.queue.add(key),
          onList: (keys) => {
            // A list holds its own namespace's keys only: forget the refused keys of that namespace it no longer holds.
            const present = new Set(keys);
            const gone = (key: string) => (namespace === undefined || refOf(key).namespace === namespace) && !present.has(key);
            for (const key of this.refused) if (gone(key)) this.refused.delete(key);
            for (const key of this.referencing.keys()) if (gone(key)) this.forget(key);
            deps.metrics.notReady.retain(kind, (key) => !gone(key));
            deps.metrics.terminating.retain(kind, (key) => !gone(key));
            if (!deps.owner && !type.namespaced) void this.retireMissing(present);
          },
          onRestart: (reason) => deps.metrics.watchRestarts.inc({ kind, reason }),
          logger: this.log,
        }),
    );
  }

  start(): void {
    for (const watch of this.watches) watch.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.watches.map((watch) => watch.stop()));
    await this.queue.stop();
  }

  retryRefused(): void {
    for (const key of this.refused) this.queue.add(key);
  }

  /** Queues every object of this kind that names `changed`, so its status follows at once (not at the relist). */
  retryReferencing(changed: DocumentRef): void {
    for (const [key, refs] of this.referencing) {
      if (refs.some((ref) => ref.kind === changed.kind && ref.key === changed.key)) this.queue.add(key);
    }
  }

  private forget(key: string): void {
    this.refused.delete(key);
    this.referencing.delete(key);
    this.missingSince.delete(key);
  }

  private count(outcome: Outcome): void {
    this.deps.metrics.reconciles.inc({ kind: this.type.kind, outcome });
  }

  /** One reconcile of one key; 'retry' puts it back after a backoff. */
  async reconcile(key: string): Promise<WorkResult> {
    const ref = refOf(key);
    const stopTimer = this.deps.metrics.duration.startTimer({ kind: this.type.kind });
    let obj: CustomObject | null = null;
    try {
      obj = await this.resources.get(ref);
      // A cluster-scoped object gone: out of this database too, whoever's finalizer ran (another
      // release's, or none: taken off by hand); a second retirement finds nothing to do.
      if (!obj && !this.type.namespaced) return await this.retire(key, ref);
      if (!obj) {
        await this.releaseOrphanedSecret(ref);
        this.forget(key);
        this.deps.metrics.notReady.forget(this.type.kind, key);
        this.deps.metrics.terminating.forget(this.type.kind, key);
        this.count('gone');
        return 'done';
      }
      if (obj.metadata.deletionTimestamp) return this.deps.owner ? await this.finalize(key, obj) : await this.retire(key, ref);
      this.referencing.set(key, referencesOf(this.type.kind, obj));
      if (this.deps.owner && isRemovable(this.type.kind) && !hasFinalizer(obj)) obj = await addFinalizer(this.resources, obj);

      const generation = obj.metadata.generation ?? 0;
      let doc: AnyManifest;
      try {
        doc = validateManifest({ apiVersion: obj.apiVersion, kind: obj.kind, metadata: obj.metadata, spec: obj.spec });
      } catch (err) {
        if (err instanceof ManifestError) throw new ReadyRefusal('InvalidSpec', `${err.field} ${err.reason}`);
        throw err;
      }
      const { result, extra } = await this.apply(obj, doc);
      const { previous } = await this.writeStatus(ref, generation, { status: 'True', reason: 'Reconciled', message: READY_MESSAGE }, extra);
      this.refused.delete(key);
      this.missingSince.delete(key);
      this.log.info({ key, action: result.action, generation }, 'reconciled');
      // Refused, now applied (what refused it went: a GameConfig owning its flag was deleted, a plan was
      // created): said on the object, since it may now hold what another object held.
      if (previous?.status === 'False') {
        await this.deps.events.record(obj, 'Normal', 'Recovered', `reconciled after being refused (${previous.reason}: ${previous.message})`);
      }
      if (result.action !== 'unchanged') this.deps.onChange({ kind: this.type.kind, key });
      this.count('ready');
      return 'done';
    } catch (err) {
      return await this.failed(key, ref, obj, err);
    } finally {
      stopTimer();
    }
  }

  /** The database made to match the document, in one transaction; a ServerKey's or LicenceKey's key written to its Secret before that commits. */
  private async apply(obj: CustomObject, doc: AnyManifest): Promise<Applied> {
    if (doc.kind === 'Project') return { result: await this.applyProject(obj, doc), extra: {} };
    const keyKind = this.type.kind;
    if (!isKeySecretKind(keyKind)) return { result: await reconcileManifest(this.deps.db, doc, this.deps.bus), extra: {} };
    const secretName = secretNameOf(obj.metadata.name, keyKind);
    const liveKeyOf = keyKind === 'LicenceKey' ? liveLicenceKeyOfManifest : liveKeyOfManifest;
    const applied = await inTransaction(this.deps.db, async (trx) => {
      const result = await reconcileManifest(trx, doc, this.deps.bus);
      const minted = result.serverKey ?? result.licenceKey;
      if (minted) {
        // Before the commit: a failed write throws, and the mint is rolled back.
        await writeKeySecret(this.deps.kube, obj, minted);
        return { result, keyId: minted.keyId, minted: true };
      }
      const live = await liveKeyOf(trx, { namespace: namespaceOf(obj.metadata), name: obj.metadata.name });
      return { result, keyId: live?.keyId, minted: false };
    });
    const { serverKey: _server, licenceKey: _licence, ...result } = applied.result; // the key goes no further than the Secret
    if (applied.minted) {
      const noun = keyKind === 'LicenceKey' ? 'licence key' : 'server key';
      await this.deps.events.record(obj, 'Normal', 'KeyMinted', `minted ${noun} ${applied.keyId} into Secret ${secretName}`);
    } else {
      const state = applied.keyId ? await keySecretState(this.deps.kube, obj, applied.keyId) : 'missing';
      if (state === 'missing') {
        throw new ReadyRefusal(
          'SecretMissing',
          `Secret ${secretName} no longer holds live key ${applied.keyId}; the key stays live: delete and re-create this ${keyKind} to revoke it and mint a new one`,
        );
      }
      if (state === 'terminating') {
        throw new ReadyRefusal(
          'SecretDeleted',
          `Secret ${secretName} was deleted while its key ${applied.keyId} is live: its finalizer ${KEY_SECRET_FINALIZER} keeps it (Terminating) and the key keeps working; ` +
            `to replace the key, delete and re-create this ${keyKind} (the Secret goes with the old key)`,
        );
      }
    }
    return { result, extra: { keyId: applied.keyId, secretName } };
  }

  /**
   * A Project, and the secrets it names (the dashboard client secret, the store's publisher key)
   * carried from their Secrets, sealed, in the same transaction.
   */
  private async applyProject(obj: CustomObject, doc: Extract<AnyManifest, { kind: 'Project' }>): Promise<ReconcileResult> {
    const secrets = await Promise.all(PROJECT_SECRET_NAMES.map(async (name) => ({ name, secret: await projectSecretOf(this.deps.kube, obj, doc.spec, name) })));
    const named = secrets.some(({ secret }) => secret);
    const publicKey = named ? await projectSecretPublicKey(this.deps.db) : undefined;
    if (named && !publicKey) throw new ReadyRefusal('NoApiKey', "no API process has published the key a project's secrets are sealed to yet: start the API");
    return inTransaction(this.deps.db, async (trx) => {
      const result = await reconcileManifest(trx, doc, this.deps.bus);
      let wrote = false;
      for (const { name, secret } of secrets) {
        const sealed = secret && publicKey ? { origin: `${secret.origin}/${publicKey}`, seal: () => sealProjectSecret(publicKey, secret.value) } : null;
        wrote = (await storeProjectSecret(trx, { namespace: namespaceOf(obj.metadata), name: obj.metadata.name }, name, sealed)) || wrote;
      }
      return wrote && result.action === 'unchanged' ? { ...result, action: 'updated' } : result;
    });
  }

  /** A deleted resource: its clean-up (removable kinds), then the finalizer off. */
  private async finalize(key: string, obj: CustomObject): Promise<WorkResult> {
    this.deps.metrics.terminating.follow(this.type.kind, key, obj);
    if (!hasFinalizer(obj)) return 'done';
    const kind = this.type.kind;
    if (isRemovable(kind)) {
      const ref = { kind, namespace: obj.metadata.namespace, name: obj.metadata.name };
      const removed = await removeManifest(this.deps.db, ref, this.deps.bus).catch((err: unknown) => {
        // Hearth refuses to undo it yet (a Project with live environments, a category posts are in):
        // the finalizer stays, the SRE sees why (Ready=False, a Warning Event), and it is tried again.
        if (err instanceof Refusal) throw new ReadyRefusal('DeletionBlocked', err.message);
        throw err;
      });
      this.log.info({ key, action: removed.action }, 'removed from the database');
      if (removed.action === 'removed') this.deps.onChange({ kind: this.type.kind, key });
    }
    // Its key revoked: its Secret may go now (the garbage collector deletes it once the resource is gone).
    if (isKeySecretKind(kind)) {
      await releaseKeySecret(this.deps.kube, kind, { namespace: namespaceOf(obj.metadata), name: obj.metadata.name }, obj.metadata.uid);
    }
    try {
      await removeFinalizer(this.resources, obj);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    this.forget(key);
    this.deps.metrics.notReady.forget(this.type.kind, key);
    this.deps.metrics.terminating.forget(this.type.kind, key);
    this.count('removed');
    return 'done';
  }

  /**
   * A cluster-scoped object deleted (its deletion started, for a follower) or gone: retired from this
   * operator's database, as the owner's finalizer retires it from the owner's. A refusal (live
   * projects still on a Plan in this database) is DeletionBlocked, retried until it holds.
   */
  private async retire(key: string, ref: ObjectRef): Promise<WorkResult> {
    const kind = this.type.kind;
    let removed = false;
    if (isRemovable(kind)) {
      const result = await removeManifest(this.deps.db, { kind, name: ref.name }, this.deps.bus).catch((err: unknown) => {
        if (err instanceof Refusal) {
          // No status to write it to here (the object is gone, or another release's): said in the metric.
          this.deps.metrics.notReady.observe(kind, key, { status: 'False', reason: 'DeletionBlocked' });
          throw new ReadyRefusal('DeletionBlocked', err.message);
        }
        throw err;
      });
      removed = result.action === 'removed';
      if (removed) {
        this.log.info({ key, action: result.action }, 'removed from the database');
        this.deps.onChange({ kind, key });
      }
    }
    this.forget(key);
    this.deps.metrics.notReady.forget(kind, key);
    this.deps.metrics.terminating.forget(kind, key);
    this.count(removed ? 'removed' : 'gone');
    return 'done';
  }

  /** A follower's fresh list: the live documents of its database the cluster no longer holds are queued (and retired). */
  private async retireMissing(present: Set<string>): Promise<void> {
    try {
      const live = await liveManifestNames(this.deps.db, this.type.kind);
      for (const name of live ?? []) if (!present.has(name)) this.queue.add(name);
    } catch (err) {
      this.log.warn({ err: describeError(err) }, "could not list the database's live documents; the next list tries again");
    }
  }

  /**
   * A key resource that is gone (deleted without the operator's clean-up, its finalizer taken off by
   * hand): its Secret's finalizer is taken off once no key of that name is live any more; a Secret
   * still holding a live key stays, since it is the only copy.
   */
  private async releaseOrphanedSecret(ref: ObjectRef): Promise<void> {
    const kind = this.type.kind;
    if (!isKeySecretKind(kind) || !ref.namespace) return;
    const liveKeyOf = kind === 'LicenceKey' ? liveLicenceKeyOfManifest : liveKeyOfManifest;
    if (await liveKeyOf(this.deps.db, { namespace: ref.namespace, name: ref.name })) return;
    if (await releaseKeySecret(this.deps.kube, kind, { namespace: ref.namespace, name: ref.name })) {
      this.log.info({ key: `${ref.namespace}/${ref.name}`, secret: secretNameOf(ref.name, kind) }, 'released the Secret of a key resource that is gone');
    }
  }

  private async failed(key: string, ref: ObjectRef, obj: CustomObject | null, err: unknown): Promise<WorkResult> {
    const refusal =
      err instanceof ManifestError
        ? { reason: refusalReason(err), message: `${err.field} ${err.reason}` }
        : err instanceof ReadyRefusal
          ? { reason: err.reason, message: err.message }
          : null;
    if (refusal?.reason === 'MissingReference' && this.stillInGrace(key)) {
      // Not reported yet: what it names may be a moment away (the same apply, reconciled by another kind).
      this.refused.add(key);
      this.log.debug({ key, message: refusal.message }, 'waiting for a reference');
      return 'retry';
    }
    if (refusal?.reason !== 'MissingReference') this.missingSince.delete(key);
    if (refusal) {
      this.refused.add(key);
      this.count('refused');
      this.log.warn({ key, reason: refusal.reason, message: refusal.message }, 'refused');
    } else {
      this.count('error');
      this.deps.metrics.retries.inc({ kind: this.type.kind });
      this.log.warn({ key, err: describeError(err), attempt: this.queue.attemptsOf(key) + 1 }, 'reconcile failed; retrying with backoff');
    }
    if (!obj) return 'retry';
    const status: ConditionStatus = refusal ? 'False' : 'Unknown';
    const ready = refusal ?? { reason: 'Retrying', message: `reconcile failed and is retried: ${describeError(err)}` };
    try {
      const { changed } = await this.writeStatus(ref, obj.metadata.generation ?? 0, { status, ...ready });
      // One Event per new refusal, not one per retry.
      if (refusal && changed) await this.deps.events.record(obj, 'Warning', refusal.reason, refusal.message);
    } catch (statusErr) {
      this.log.warn({ key, err: describeError(statusErr) }, 'could not write status');
    }
    return 'retry';
  }

  /** Whether a missing reference of `key` is still within its grace (the first one starts it). */
  private stillInGrace(key: string): boolean {
    const now = Date.now();
    const since = this.missingSince.get(key) ?? now;
    this.missingSince.set(key, since);
    return now - since < this.deps.referenceGraceMs;
  }

  /**
   * Writes status through /status on the object read afresh (kubebuilder's re-read before an update),
   * only when something changes; a 409 (changed meanwhile) reads again. Answers whether it wrote,
   * and the Ready condition it replaced.
   */
  private async writeStatus(
    ref: ObjectRef,
    generation: number,
    ready: { status: ConditionStatus; reason: string; message: string },
    extra: Record<string, unknown> = {},
  ): Promise<{ changed: boolean; previous?: Condition }> {
    this.deps.metrics.notReady.observe(this.type.kind, ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name, ready);
    // A follower never writes to the object: the owner's status says what the owner's database did.
    if (!this.deps.owner) return { changed: false };
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const fresh = await this.resources.get(ref);
      if (!fresh) return { changed: false };
      const next = nextStatus(fresh.status, generation, ready, extra);
      if (sameStatus(fresh.status, next)) return { changed: false };
      try {
        await this.resources.replaceStatus({ ...fresh, status: next });
        return { changed: true, previous: conditionOf(fresh.status, READY) };
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err;
      }
    }
    throw new Error('the status kept changing while it was written');
  }
}

export { FINALIZER };
