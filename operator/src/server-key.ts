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
 * The key never appears in the resource's status, in an Event or in a log line.
 */
import { createHash } from 'node:crypto';
import type { CustomObject, K8s, KubeClients } from './kube';
import { isConflict, isNotFound, namespaceOf } from './kube';
import { ReadyRefusal } from './refusal';

export const SECRET_SUFFIX = '-server-key';
export const SECRET_KEY_FIELD = 'key';
export const SECRET_KEY_ID_FIELD = 'keyId';

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
      labels: { 'app.kubernetes.io/managed-by': 'hearth-operator', [KEY_SECRET_KINDS[kindOf(serverKey)].label]: serverKey.metadata.name },
      ownerReferences: [
        { apiVersion: serverKey.apiVersion, kind: serverKey.kind, name: serverKey.metadata.name, uid: serverKey.metadata.uid, controller: true, blockOwnerDeletion: true },
      ],
    },
    type: 'Opaque',
    stringData: { [SECRET_KEY_FIELD]: minted.key, [SECRET_KEY_ID_FIELD]: minted.keyId },
  };
}

/**
 * Writes the minted key into the ServerKey's Secret: created, or replaced when one is there already
 * (it holds a key that never went live, or the one revoked by a move to another environment).
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
    if (!existing.metadata?.ownerReferences?.some((o) => o.uid === serverKey.metadata.uid)) {
      throw new ReadyRefusal('SecretConflict', `Secret ${namespace}/${name} exists and is not this ${serverKey.kind}'s; rename or delete it`);
    }
    await kube.core.replaceNamespacedSecret({ name, namespace, body });
  }
  return name;
}

/** Whether the ServerKey's Secret still holds the key with this id (an SRE may have deleted it). */
export async function keySecretHolds(kube: KubeClients, serverKey: CustomObject, keyId: string): Promise<boolean> {
  try {
    const secret = await kube.core.readNamespacedSecret({ name: secretNameOf(serverKey.metadata.name, kindOf(serverKey)), namespace: namespaceOf(serverKey.metadata) });
    const stored = secret.data?.[SECRET_KEY_ID_FIELD];
    return stored !== undefined && Buffer.from(stored, 'base64').toString('utf8') === keyId;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
