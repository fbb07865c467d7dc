/**
 * The Kubernetes client (@kubernetes/client-node, an ES module) and the few calls the operator makes
 * through it. The library is loaded with import() once at start: this workspace is CommonJS like the
 * rest of Hearth, and only its types are imported statically.
 */
import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { API_VERSION, MANIFEST_KINDS, type ManifestKind } from '@hearth/core/manifests';

export type { K8s };
export type KubeLib = typeof K8s;

export const [GROUP, VERSION] = API_VERSION.split('/') as [string, string];

export interface KubeClients {
  lib: KubeLib;
  config: K8s.KubeConfig;
  custom: K8s.CustomObjectsApi;
  core: K8s.CoreV1Api;
  coordination: K8s.CoordinationV1Api;
}

/** KUBECONFIG when given, else what loadFromDefault finds (in a pod: the ServiceAccount's token). */
export async function connectKube(kubeconfig?: string): Promise<KubeClients> {
  const lib: KubeLib = await import('@kubernetes/client-node');
  const config = new lib.KubeConfig();
  if (kubeconfig) config.loadFromFile(kubeconfig);
  else config.loadFromDefault();
  return {
    lib,
    config,
    custom: config.makeApiClient(lib.CustomObjectsApi),
    core: config.makeApiClient(lib.CoreV1Api),
    coordination: config.makeApiClient(lib.CoordinationV1Api),
  };
}

/** The HTTP status of a failed call (client-node's ApiException, or a watch's error), else undefined. */
export function statusOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | null;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}

export const isNotFound = (err: unknown) => statusOf(err) === 404;
export const isConflict = (err: unknown) => statusOf(err) === 409;

/** One line about a failed call, without its body (an API server's message can be long). */
export function describeError(err: unknown): string {
  const status = statusOf(err);
  const body = (err as { body?: unknown })?.body;
  let message = (err as Error)?.message ?? String(err);
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: string };
      if (parsed.message) message = parsed.message;
    } catch {
      /* not JSON: keep the error's own message */
    }
  } else if (body && typeof (body as { message?: unknown }).message === 'string') {
    message = (body as { message: string }).message;
  }
  return status ? `${status}: ${message.split('\n')[0]}` : message.split('\n')[0];
}

/** A hearth.gg resource as the API server names it: its plural (from discovery) and scope. */
export interface ResourceType {
  kind: ManifestKind;
  plural: string;
  namespaced: boolean;
}

/**
 * The plural name of every kind of MANIFEST_KINDS, read from the API server's discovery of
 * hearth.gg/v1alpha1: the CRDs are the one place that names them. A kind without its CRD is an error
 * naming the kinds (the CRDs are not installed, or older than this operator).
 */
export async function discoverResources(kube: KubeClients): Promise<ResourceType[]> {
  const list = await kube.custom.getAPIResources({ group: GROUP, version: VERSION });
  const byKind = new Map(list.resources.filter((r) => !r.name.includes('/')).map((r) => [r.kind, r]));
  const kinds = Object.keys(MANIFEST_KINDS) as ManifestKind[];
  const types: ResourceType[] = [];
  const missing: string[] = [];
  for (const kind of kinds) {
    const resource = byKind.get(kind);
    if (resource) types.push({ kind, plural: resource.name, namespaced: MANIFEST_KINDS[kind].namespaced });
    else missing.push(kind);
  }
  if (missing.length > 0) throw new Error(`the API server has no custom resource for ${missing.join(', ')} (install or upgrade the hearth.gg CRDs)`);
  return types;
}

/** What the operator reads of a hearth.gg object. */
export interface CustomObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    generation?: number;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  spec?: unknown;
  status?: Record<string, unknown>;
}

export interface ObjectRef {
  namespace?: string;
  name: string;
}

/** The namespace of an object of a namespaced kind: the API server always sets it. */
export function namespaceOf(ref: ObjectRef): string {
  if (ref.namespace === undefined) throw new Error(`${ref.name}: an object of a namespaced kind came without its namespace`);
  return ref.namespace;
}

/** get / JSON-patch / replace-status of one resource type, the same for cluster-scoped and namespaced kinds. */
export class CustomResources {
  /** `fieldManager`: the name its writes carry in the objects' managedFields (which release's operator wrote them). */
  constructor(
    private readonly kube: KubeClients,
    readonly type: ResourceType,
    private readonly fieldManager?: string,
  ) {}

  private where(ref: ObjectRef) {
    return { group: GROUP, version: VERSION, plural: this.type.plural, name: ref.name, ...(this.type.namespaced ? { namespace: namespaceOf(ref) } : {}) };
  }

  /** The object, or null when it is gone. */
  async get(ref: ObjectRef): Promise<CustomObject | null> {
    try {
      const w = this.where(ref);
      return (
        this.type.namespaced ? await this.kube.custom.getNamespacedCustomObject(w as never) : await this.kube.custom.getClusterCustomObject(w)
      ) as CustomObject;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /** Lists every object (of one namespace when given), with the list's resourceVersion to watch from. */
  async list(namespace?: string): Promise<{ items: CustomObject[]; resourceVersion: string }> {
    const where = { group: GROUP, version: VERSION, plural: this.type.plural };
    const list = (
      namespace && this.type.namespaced
        ? await this.kube.custom.listNamespacedCustomObject({ ...where, namespace })
        : await this.kube.custom.listClusterCustomObject(where)
    ) as { items: CustomObject[]; metadata: { resourceVersion: string } };
    return { items: list.items, resourceVersion: list.metadata.resourceVersion };
  }

  /** The watch path (list + ?watch), of one namespace when given. */
  path(namespace?: string): string {
    return namespace && this.type.namespaced
      ? `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${this.type.plural}`
      : `/apis/${GROUP}/${VERSION}/${this.type.plural}`;
  }

  /** A JSON patch (RFC 6902): its `test` operations make a concurrent change a 409 instead of a lost write. */
  async patch(ref: ObjectRef, operations: unknown[]): Promise<CustomObject> {
    const w = { ...this.where(ref), body: operations, fieldManager: this.fieldManager };
    return (
      this.type.namespaced ? await this.kube.custom.patchNamespacedCustomObject(w as never) : await this.kube.custom.patchClusterCustomObject(w)
    ) as CustomObject;
  }

  /** PUT /status with the object's resourceVersion: a 409 when it changed since it was read. */
  async replaceStatus(obj: CustomObject): Promise<CustomObject> {
    const w = { ...this.where({ name: obj.metadata.name, namespace: obj.metadata.namespace }), body: obj, fieldManager: this.fieldManager };
    return (
      this.type.namespaced ? await this.kube.custom.replaceNamespacedCustomObjectStatus(w as never) : await this.kube.custom.replaceClusterCustomObjectStatus(w)
    ) as CustomObject;
  }
}
