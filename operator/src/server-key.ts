/**
 * A ServerKey's Secret: the operator mints the key (the ServerKey reconciler, in a transaction) and
 * writes the whole key into a Secret before that transaction commits, so no minted key is ever lost:
 * a failed write rolls the mint back and the reconcile is retried; a commit that fails after the
 * write leaves a Secret whose key was never live, overwritten by the next mint.
 *
 * The Secret, in the ServerKey's namespace:
 *   name      `<serverkey name>-server-key` (a too long name is cut and given a hash, see secretNameOf)
 *   data      `key`: the whole key (hsk_…), what a game server sends; `keyId`: its public id
 *   owner     the ServerKey (controller reference), so the cluster's garbage collector deletes it
 *             with the resource once the finalizer has revoked the key
 *   labels    app.kubernetes.io/managed-by=hearth-operator, hearth.gg/server-key=<name>
 *   finalizer hearth.gg/key-secret: a `kubectl delete secret` of a live key leaves the Secret
 *             Terminating, still holding the key (game servers keep reading it, nothing is rotated);
 *             the operator takes the finalizer off only when the ServerKey itself is deleted (its key
 *             revoked), so the garbage collector can then delete the Secret
 * The operator watches these Secrets by their managed-by label (secret-watch.ts): a deleted or
 * changed Secret reconciles its ServerKey within seconds, not at the relist.
 * The key never appears in the resource's status, in an Event or in a log line.
 */
import { createHash } from 'node:crypto';
import type { CustomObject, K8s, KubeClients } from './kube';
import { isConflict, isNotFound, namespaceOf } from './kube';
import { ReadyRefusal } from './refusal';

export const SECRET_SUFFIX = '-server-key';
export const SECRET_KEY_FIELD = 'key';
export const SECRET_KEY_ID_FIELD = 'keyId';
/** The label every Secret the operator writes carries (its watch selects on it). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'hearth-operator';
/** Keeps a live key's Secret from being deleted by accident: taken off only when its key resource is deleted. */
export const KEY_SECRET_FINALIZER = 'hearth.gg/key-secret';

/**
 * The kinds whose minted key the operator writes into a Secret it owns, the same way: a ServerKey's
 * (`<name>-server-key`) and a LicenceKey's (`<name>-licence-key`, docs/licence.md).
 */
export const KEY_SECRET_KINDS = {
  ServerKey: { suffix: SECRET_SUFFIX, label: 'hearth.gg/server-key' },
  LicenceKey: { suffix: '-licence-key', label: 'hearth.gg/licence-key' },
} as const;
export type KeySecretKind = keyof typeof KEY_SECRET_KINDS;

export function isKeySecretKind(kind: string): kind is KeySecretKind {
  return kind in KEY_SECRET_KINDS;
}

/** The Secret's name for a key resource named `name` (at most 253 characters, as Secret names must be). */
export function secretNameOf(name: string, kind: KeySecretKind = 'ServerKey'): string {
  const suffix = KEY_SECRET_KINDS[kind].suffix;
  const whole = `${name}${suffix}`;
  if (whole.length <= 253) return whole;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, 253 - suffix.length - 9).replace(/[-.]+$/, '')}-${hash}${suffix}`;
}

function kindOf(resource: CustomObject): KeySecretKind {
  return isKeySecretKind(resource.kind) ? resource.kind : 'ServerKey';
}

function secretOf(serverKey: CustomObject, minted: { keyId: string; key: string }): K8s.V1Secret {
  const name = secretNameOf(serverKey.metadata.name, kindOf(serverKey));
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: serverKey.metadata.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [KEY_SECRET_KINDS[kindOf(serverKey)].label]: serverKey.metadata.name },
      finalizers: [KEY_SECRET_FINALIZER],
      ownerReferences: [
        {
          apiVersion: serverKey.apiVersion,
          kind: serverKey.kind,
          name: serverKey.metadata.name,
          uid: serverKey.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    type: 'Opaque',
    stringData: { [SECRET_KEY_FIELD]: minted.key, [SECRET_KEY_ID_FIELD]: minted.keyId },
  };
}

/**
 * Writes the minted key into the ServerKey's Secret: created, or its data replaced when one is there
 * already (it holds a key that never went live, or the one revoked by a move to another environment).
 * A replacement is a JSON patch whose `test` on the uid makes it fail rather than write into a Secret
 * that was deleted and re-created meanwhile (the operator holds `patch`, not `update`, on Secrets).
 */
export async function writeKeySecret(kube: KubeClients, serverKey: CustomObject, minted: { keyId: string; key: string }): Promise<string> {
  const body = secretOf(serverKey, minted);
  const namespace = namespaceOf(serverKey.metadata);
  const name = secretNameOf(serverKey.metadata.name, kindOf(serverKey));
  try {
    await kube.core.createNamespacedSecret({ namespace, body });
  } catch (err) {
    if (!isConflict(err)) throw err;
    const existing = await kube.core.readNamespacedSecret({ name, namespace });
    if (!ownedBy(existing, serverKey)) {
      throw new ReadyRefusal('SecretConflict', `Secret ${namespace}/${name} exists and is not this ${serverKey.kind}'s; rename or delete it`);
    }
    const data = Object.fromEntries(Object.entries(body.stringData ?? {}).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));
    const finalizers = existing.metadata?.finalizers ?? [];
    await kube.core.patchNamespacedSecret({
      name,
      namespace,
      body: [
        { op: 'test', path: '/metadata/uid', value: existing.metadata?.uid },
        // `add` sets a member whether it is there or not (`replace` fails on one that is missing).
        { op: 'add', path: '/data', value: data },
        { op: 'add', path: '/metadata/labels', value: { ...existing.metadata?.labels, ...body.metadata?.labels } },
        // A Secret being deleted takes no new finalizer (the API server refuses one): it keeps what it has.
        ...(finalizers.includes(KEY_SECRET_FINALIZER) || existing.metadata?.deletionTimestamp
          ? []
          : [{ op: 'add', path: '/metadata/finalizers', value: [...finalizers, KEY_SECRET_FINALIZER] }]),
      ],
    });
  }
  return name;
}

function ownedBy(secret: K8s.V1Secret, owner: CustomObject): boolean {
  return secret.metadata?.ownerReferences?.some((o) => o.uid === owner.metadata.uid) ?? false;
}

/** What the key resource's Secret holds of the live key with this id. */
export type KeySecretState =
  /** It holds the key, and is not being deleted. */
  | 'holds'
  /** It holds the key, but someone deleted it: the finalizer keeps it (Terminating) and the key keeps working. */
  | 'terminating'
  /** It is gone, holds another key, or none. */
  | 'missing';

/**
 * Whether the key resource's Secret still holds the key with this id (an SRE may have deleted it).
 * A Secret written before the finalizer existed (an upgrade) is given it here.
 */
export async function keySecretState(kube: KubeClients, serverKey: CustomObject, keyId: string): Promise<KeySecretState> {
  const name = secretNameOf(serverKey.metadata.name, kindOf(serverKey));
  const namespace = namespaceOf(serverKey.metadata);
  let secret: K8s.V1Secret;
  try {
    secret = await kube.core.readNamespacedSecret({ name, namespace });
  } catch (err) {
    if (isNotFound(err)) return 'missing';
    throw err;
  }
  const stored = secret.data?.[SECRET_KEY_ID_FIELD];
  if (stored === undefined || Buffer.from(stored, 'base64').toString('utf8') !== keyId || !ownedBy(secret, serverKey)) return 'missing';
  if (secret.metadata?.deletionTimestamp) return 'terminating';
  const finalizers = secret.metadata?.finalizers ?? [];
  if (!finalizers.includes(KEY_SECRET_FINALIZER)) {
    await kube.core.patchNamespacedSecret({
      name,
      namespace,
      body: [
        { op: 'test', path: '/metadata/resourceVersion', value: secret.metadata?.resourceVersion },
        { op: 'add', path: '/metadata/finalizers', value: [...finalizers, KEY_SECRET_FINALIZER] },
      ],
    });
  }
  return 'holds';
}

/**
 * Takes the finalizer off the Secret of the key resource `name` (of this kind, in this namespace):
 * the resource is being deleted (its key revoked), or is gone. Nothing to do when the Secret is gone
 * or has no finalizer. `ownerUid`, when given, must be the Secret's owner (a Secret of a re-created
 * resource of the same name is not released by the old one's deletion).
 */
export async function releaseKeySecret(kube: KubeClients, kind: KeySecretKind, ref: { namespace: string; name: string }, ownerUid?: string): Promise<boolean> {
  const name = secretNameOf(ref.name, kind);
  let secret: K8s.V1Secret;
  try {
    secret = await kube.core.readNamespacedSecret({ name, namespace: ref.namespace });
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
  const finalizers = secret.metadata?.finalizers ?? [];
  if (!finalizers.includes(KEY_SECRET_FINALIZER)) return false;
  if (secret.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY) return false;
  if (ownerUid !== undefined && !secret.metadata?.ownerReferences?.some((o) => o.uid === ownerUid)) return false;
  try {
    await kube.core.patchNamespacedSecret({
      name,
      namespace: ref.namespace,
      body: [
        { op: 'test', path: '/metadata/finalizers', value: finalizers },
        { op: 'replace', path: '/metadata/finalizers', value: finalizers.filter((f) => f !== KEY_SECRET_FINALIZER) },
      ],
    });
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
  return true;
}
