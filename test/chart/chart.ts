/**
 * Driving the real `helm` and `kubectl` binaries (built by `make chart-test` first, test/kube/tools/build.sh) against charts/hearth.
 * Tests never import a Kubernetes client library: they run the tools as child processes, as an SRE would.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KUBE_TOOLS_BIN, kubeToolPath } from '../support/kube';

export const ROOT = path.resolve(__dirname, '..', '..');
export const CHART = path.join(ROOT, 'charts', 'hearth');
export const MINIMAL_VALUES = path.join(CHART, 'ci', 'minimal-values.yaml');
export const FULL_VALUES = path.join(CHART, 'ci', 'full-values.yaml');
/** The Hearth CRDs (generated from the TypeBox schemas by `hearth crds`). */
export const HEARTH_CRDS_DIR = path.join(CHART, 'templates', 'crds');
/** ServiceMonitor and PrometheusRule CRDs, fetched by build.sh from the prometheus-operator module. */
export const PROMETHEUS_CRDS_DIR = path.join(path.dirname(KUBE_TOOLS_BIN), 'crds');
/** The Kubernetes version the chart is rendered for (the test API server's). */
export const KUBE_VERSION = '1.34.4';
export const RELEASE = 'hearth';
export const NAMESPACE = 'hearth-system';

import type { RunResult } from '../support/processes';
export type { RunResult };

export function run(binary: string, args: string[], input?: string): RunResult {
  const res = spawnSync(binary, args, { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
  if (res.error) throw res.error;
  return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

/** Runs a tool and throws with its stderr when it fails. */
export function runOk(binary: string, args: string[], input?: string): string {
  const res = run(binary, args, input);
  if (res.status !== 0) throw new Error(`${path.basename(binary)} ${args.join(' ')} exited ${res.status}:\n${res.stderr}${res.stdout}`);
  return res.stdout;
}

export const helm = (args: string[]) => run(kubeToolPath('helm'), args);
export const kubectl = (kubeconfig: string, args: string[], input?: string) => run(kubeToolPath('kubectl'), ['--kubeconfig', kubeconfig, ...args], input);

/** `helm template` arguments for a values file and `--set` pairs. */
export function templateArgs(valuesFiles: string[], sets: string[] = []): string[] {
  return [
    'template',
    RELEASE,
    CHART,
    '--namespace',
    NAMESPACE,
    '--kube-version',
    KUBE_VERSION,
    ...valuesFiles.flatMap((f) => ['--values', f]),
    ...sets.flatMap((s) => ['--set', s]),
  ];
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    // What the API server adds to an object it stores (read back with `kubectl get -o json`).
    uid?: string;
    deletionTimestamp?: string;
    ownerReferences?: { kind: string; name: string; uid: string }[];
    resourceVersion?: string;
    finalizers?: string[];
    managedFields?: { manager: string; operation?: string; subresource?: string }[];
  };

  [key: string]: any;
}

/** The YAML `helm template` prints. */
export function renderYaml(valuesFiles: string[], sets: string[] = []): string {
  return runOk(kubeToolPath('helm'), templateArgs(valuesFiles, sets));
}

export function parseObjects(yamlText: string): KubeObject[] {
  return parseAllDocuments(yamlText)
    .map((doc) => {
      if (doc.errors.length) throw doc.errors[0];
      return doc.toJS() as KubeObject | null;
    })
    .filter((o): o is KubeObject => o !== null);
}

/** The objects the chart renders with these values. */
export function render(valuesFiles: string[], sets: string[] = []): KubeObject[] {
  return parseObjects(renderYaml(valuesFiles, sets));
}

export function find(objects: KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
}

/** The hearth.gg CRD files, when the generator has written them. */
export function hearthCrdFiles(): string[] {
  if (!fs.existsSync(HEARTH_CRDS_DIR)) return [];
  return fs
    .readdirSync(HEARTH_CRDS_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => path.join(HEARTH_CRDS_DIR, f));
}

export function prometheusCrdFiles(): string[] {
  return fs
    .readdirSync(PROMETHEUS_CRDS_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => path.join(PROMETHEUS_CRDS_DIR, f));
}

/** A component's object name: `<release>-<component>` (the release name contains the chart's). */
export const named = (component: string) => `${RELEASE}-${component}`;
