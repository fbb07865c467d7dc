/**
 * `hearth get KIND [NAME]` and `hearth describe KIND NAME`: the documents applied (by `hearth apply`
 * or the operator), read from the database as `kubectl get` and `kubectl describe` read a cluster
 * (docs/cli.md). Everything comes from the kinds' list (MANIFEST_KINDS): the names a kind answers to
 * are its CRD's, the columns are its CRD's printer columns (printerColumns, what the CRD YAML is
 * made from), the references are references.ts'. No kind has code of its own here.
 */
import {
  type AppliedManifest,
  type CrdPrinterColumn,
  DEFAULT_NAMESPACE,
  MANIFEST_KINDS,
  type ManifestKind,
  type ManifestLink,
  API_GROUP,
  appliedManifestElsewhere,
  appliedManifestLinks,
  listAppliedManifests,
  manifestYaml,
  nearestField,
  printerColumns,
} from '@hearth/core/manifests';
import { CliError, otherNamespacesHint, print, table } from '../output';
import { withRuntime } from '../runtime';

const KINDS = Object.keys(MANIFEST_KINDS) as ManifestKind[];

/** The names a kind answers to, as kubectl takes them for a CRD: kind, plural, singular, short names (any case), each also with `.hearth.gg`. */
export function kindNames(kind: ManifestKind): string[] {
  const crd: { plural: string; shortNames: readonly string[] } = MANIFEST_KINDS[kind].crd;
  return [kind, crd.plural, kind.toLowerCase(), ...crd.shortNames];
}

/** The kind a KIND argument names, or a refusal suggesting the nearest name. */
export function resolveKind(typed: string): ManifestKind {
  const bare = typed.toLowerCase().endsWith(`.${API_GROUP}`) ? typed.slice(0, -(API_GROUP.length + 1)) : typed;
  const found = KINDS.find((kind) => kindNames(kind).some((name) => name.toLowerCase() === bare.toLowerCase()));
  if (found) return found;
  const near = nearestField(bare, KINDS.flatMap(kindNames));
  throw new CliError(
    near
      ? `unknown kind "${typed}" (did you mean ${near}?)`
      : `unknown kind "${typed}"; the kinds are ${KINDS.join(', ')} (or their plurals: ${KINDS.map((k) => MANIFEST_KINDS[k].crd.plural).join(', ')})`,
  );
}

type Output = 'table' | 'wide' | 'json' | 'yaml';
const OUTPUTS = ['json', 'yaml', 'wide'] as const;

/** `-o`'s value (and `--json`, its alias for `-o json`), or a refusal. */
export function outputOf(opts: { output?: string; json?: boolean }): Output {
  if (opts.json && opts.output !== undefined && opts.output !== 'json') throw new CliError(`--json is -o json; it cannot go with -o ${opts.output}`);
  if (opts.json) return 'json';
  if (opts.output === undefined) return 'table';
  if ((OUTPUTS as readonly string[]).includes(opts.output)) return opts.output as Output;
  throw new CliError(`-o must be ${OUTPUTS.slice(0, -1).join(', ')} or ${OUTPUTS[OUTPUTS.length - 1]} (not "${opts.output}")`);
}

/**
 * The value a printer column's JSONPath finds in an object: the subset of Kubernetes' JSONPath the
 * CRDs use (`.field`, `[?(@.field=="value")]`, `[n]`); the first value found, as kubectl prints it.
 * A path outside that subset throws, so a column written in more of the language is seen at once.
 */
export function jsonPathValue(obj: unknown, jsonPath: string): unknown {
  let values: unknown[] = [obj];
  const step = /^(?:\.([A-Za-z0-9_-]+)|\[\?\(@\.([A-Za-z0-9_-]+)=="([^"]*)"\)\]|\[(\d+)\])/;
  let rest = jsonPath;
  while (rest.length > 0) {
    const m = step.exec(rest);
    if (!m) throw new Error(`JSONPath ${jsonPath}: "${rest}" is not understood by hearth get`);
    rest = rest.slice(m[0].length);
    if (m[1] !== undefined)
      values = values.map((v) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[m[1]] : undefined));
    else if (m[2] !== undefined)
      values = values.flatMap((v) => (Array.isArray(v) ? v.filter((item) => (item as Record<string, unknown> | null)?.[m[2]] === m[3]) : []));
    else values = values.map((v) => (Array.isArray(v) ? v[Number(m[4])] : undefined));
    values = values.filter((v) => v !== undefined);
  }
  return values[0];
}

/** How long ago, as kubectl's AGE says it (Kubernetes' duration.HumanDuration). */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** A cell of a printer column, as kubectl prints it (a date as an age). */
function cell(obj: AppliedManifest, column: CrdPrinterColumn, now: number): string {
  const value = jsonPathValue(obj, column.jsonPath);
  if (value === undefined || value === null) return '';
  if (column.type === 'date') return humanDuration(now - Date.parse(String(value)));
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** The table `kubectl get` prints for these objects: NAMESPACE (every namespace of a namespaced kind), NAME, the CRD's columns (with -o wide, all of them). */
export function getTable(kind: ManifestKind, objects: AppliedManifest[], opts: { allNamespaces: boolean; wide: boolean; now?: number }): string {
  const now = opts.now ?? Date.now();
  const columns = printerColumns(kind).filter((c) => opts.wide || !c.priority);
  const withNamespace = opts.allNamespaces && MANIFEST_KINDS[kind].namespaced;
  return table(
    [...(withNamespace ? ['NAMESPACE'] : []), 'NAME', ...columns.map((c) => c.name.toUpperCase())],
    objects.map((o) => [...(withNamespace ? [o.metadata.namespace ?? ''] : []), o.metadata.name, ...columns.map((c) => cell(o, c, now))]),
  );
}

interface GetOptions {
  output?: string;
  json?: boolean;
  namespace?: string;
  allNamespaces?: boolean;
}

/** The object named, or a refusal naming kind, name and namespace (with where else it is, or that it was deleted). */
async function oneOrFail(db: Parameters<typeof listAppliedManifests>[0], kind: ManifestKind, namespace: string, name: string): Promise<AppliedManifest> {
  const [found] = await listAppliedManifests(db, kind, { namespace, name });
  if (found) return found;
  const namespaced = MANIFEST_KINDS[kind].namespaced;
  const elsewhere = await appliedManifestElsewhere(db, kind, namespace, name);
  const where = namespaced ? ` in namespace "${namespace}"` : '';
  const deleted = elsewhere.deletedAt ? ` (deleted ${humanDuration(Date.now() - elsewhere.deletedAt.getTime())} ago)` : '';
  throw new CliError(`no ${kind} "${name}"${where}${deleted}${namespaced ? otherNamespacesHint(elsewhere.namespaces) : ''}`);
}

export async function runGet(kindArg: string, name: string | undefined, opts: GetOptions): Promise<void> {
  // Refused before the database is opened.
  const kind = resolveKind(kindArg);
  const output = outputOf(opts);
  if (name !== undefined && opts.allNamespaces) throw new CliError('a name cannot go with -A (--all-namespaces): name its namespace with -n');
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  await withRuntime({}, async (rt) => {
    const objects =
      name !== undefined
        ? [await oneOrFail(rt.db, kind, namespace, name)]
        : await listAppliedManifests(rt.db, kind, { namespace: opts.allNamespaces ? null : namespace });
    const single = name !== undefined;
    const document = single ? objects[0] : { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: objects };
    if (output === 'json') return print(`${JSON.stringify(document, null, 2)}\n`);
    if (output === 'yaml') return print(manifestYaml(document));
    if (objects.length === 0) {
      // As kubectl: nothing on stdout, a line on stderr, success.
      const where = opts.allNamespaces || !MANIFEST_KINDS[kind].namespaced ? '' : ` in ${namespace} namespace`;
      process.stderr.write(`No resources found${where}.\n`);
      return;
    }
    print(`${getTable(kind, objects, { allNamespaces: !!opts.allNamespaces, wide: output === 'wide' })}\n`);
  });
}

/** `appKey` → `App Key`, as kubectl describe labels a field (known initialisms in capitals). */
export function fieldLabel(key: string): string {
  const INITIALISMS = new Set(['api', 'id', 'url', 'uri', 'ip', 'sku', 'http', 'https', 'json', 'xp', 'cel']);
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_]+/)
    .filter(Boolean)
    .map((word) => (INITIALISMS.has(word.toLowerCase()) ? word.toUpperCase() : word[0].toUpperCase() + word.slice(1)))
    .join(' ');
}

/** A value laid out as kubectl describe lays out an object's fields: `Label:  value`, nested maps and lists indented two spaces a level, values aligned per map. */
export function describeLines(value: Record<string, unknown>, indent = 0): string[] {
  const pad = ' '.repeat(indent);
  const keys = Object.keys(value).sort();
  const scalars = keys.filter((k) => !isNested(value[k]));
  const width = Math.max(0, ...scalars.map((k) => fieldLabel(k).length + 1));
  const lines: string[] = [];
  for (const key of keys) {
    const v = value[key];
    const label = `${fieldLabel(key)}:`;
    if (!isNested(v)) {
      lines.push(`${pad}${label.padEnd(width)}  ${scalarText(v)}`);
    } else if (Array.isArray(v)) {
      lines.push(`${pad}${label}`);
      for (const item of v) {
        if (item !== null && typeof item === 'object' && !Array.isArray(item)) lines.push(...describeLines(item as Record<string, unknown>, indent + 2));
        else lines.push(`${pad}  ${scalarText(item)}`);
      }
    } else {
      lines.push(`${pad}${label}`);
      lines.push(...describeLines(v as Record<string, unknown>, indent + 2));
    }
  }
  return lines;
}

function isNested(v: unknown): boolean {
  return v !== null && typeof v === 'object' && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0);
}

function scalarText(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'object') return Array.isArray(v) ? '[]' : '{}';
  return String(v);
}

function mapText(map: Record<string, string> | undefined): string[] {
  const entries = Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length === 0 ? ['<none>'] : entries.map(([k, v]) => `${k}=${v}`);
}

function linkLines(links: ManifestLink[]): string[] {
  if (links.length === 0) return ['  <none>'];
  const STATE = { applied: '', deleted: ' (deleted)', unknown: ' (not applied)' } as const;
  const rows = links.map((l) => [l.kind, l.namespace ? `${l.namespace}/${l.name}` : l.name, `${l.field}${STATE[l.state]}`]);
  return table(['KIND', 'NAME', 'FIELD'], rows)
    .split('\n')
    .slice(1)
    .map((line) => `  ${line}`);
}

/** The text of `hearth describe`: kubectl describe's layout for a custom resource, and the documents it names and that name it. */
export function describeText(obj: AppliedManifest, links: { refersTo: ManifestLink[]; referredBy: ManifestLink[] }): string {
  const head: [string, string[]][] = [
    ['Name', [obj.metadata.name]],
    ...(obj.metadata.namespace !== undefined ? [['Namespace', [obj.metadata.namespace]] as [string, string[]]] : []),
    ['Labels', mapText(obj.metadata.labels)],
    ['Annotations', mapText(obj.metadata.annotations)],
    ['API Version', [obj.apiVersion]],
    ['Kind', [obj.kind]],
  ];
  const width = Math.max(...head.map(([label]) => label.length + 1));
  const lines = head.flatMap(([label, values]) => values.map((v, i) => `${(i === 0 ? `${label}:` : '').padEnd(width)}  ${v}`));
  lines.push('Metadata:', ...describeLines({ creationTimestamp: obj.metadata.creationTimestamp, generation: obj.metadata.generation }, 2));
  lines.push('Spec:', ...describeLines(obj.spec, 2));
  lines.push('Status:', ...describeLines(obj.status as unknown as Record<string, unknown>, 2));
  lines.push('Refers to:', ...linkLines(links.refersTo));
  lines.push('Referred to by:', ...linkLines(links.referredBy));
  return lines.join('\n');
}

export async function runDescribe(kindArg: string, name: string, opts: { namespace?: string }): Promise<void> {
  const kind = resolveKind(kindArg);
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  await withRuntime({}, async (rt) => {
    const obj = await oneOrFail(rt.db, kind, namespace, name);
    print(`${describeText(obj, await appliedManifestLinks(rt.db, obj))}\n`);
  });
}
