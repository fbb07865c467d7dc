/**
 * The real Prometheus of the checks (Debian's `prometheus` package: promtool and the server), the
 * chart's rules as `helm template` renders them, and the dashboards' PromQL with Grafana's variables
 * given values.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FULL_VALUES, CHART, find, render } from '../chart/chart';
import { kubeToolPath } from '../support/kube';
import { freePort } from '../support/ports';

export const DASHBOARDS_DIR = path.join(CHART, 'dashboards');
export const OPERATIONS_DOC = path.join(CHART, '..', '..', 'docs', 'operations.md');

/** A tool of the prometheus package; fails (never skips) where it is missing. */
export function prometheusTool(name: 'prometheus' | 'promtool'): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).concat(['/usr/bin', '/usr/sbin'])) {
    const candidate = path.join(dir, name);
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error(`${name} is not installed: the observability tests need Debian's prometheus package (.ci/services.sh installs it; \`make services\`)`);
}

export function helmAvailable(): void {
  const helm = kubeToolPath('helm');
  if (!fs.existsSync(helm)) throw new Error(`helm is not at ${helm}: \`make test-tools\` builds it (\`make test\` runs it first)`);
}

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The chart's PrometheusRule's groups, rendered with the CI's full values (the extra rule included). */
export function renderedRuleGroups(): { name: string; rules: Rule[] }[] {
  helmAvailable();
  return find(render([FULL_VALUES]), 'PrometheusRule', 'hearth').spec.groups;
}

export interface PanelQuery {
  dashboard: string;
  panel: string;
  expr: string;
}

/** Every PromQL target of every panel (rows' nested panels too) of every dashboard file. */
export function dashboardQueries(): PanelQuery[] {
  const queries: PanelQuery[] = [];
  for (const file of fs.readdirSync(DASHBOARDS_DIR).filter((f) => f.endsWith('.json'))) {
    const dashboard = JSON.parse(fs.readFileSync(path.join(DASHBOARDS_DIR, file), 'utf8'));
    const walk = (panels: { title: string; targets?: { expr?: string }[]; panels?: unknown[] }[] = []) => {
      for (const panel of panels) {
        for (const t of panel.targets ?? []) if (t.expr) queries.push({ dashboard: file, panel: panel.title, expr: t.expr });
        walk(panel.panels as never);
      }
    };
    walk(dashboard.panels);
  }
  return queries;
}

/**
 * A panel's PromQL as Grafana sends it: its variables given values (the namespace the test's targets
 * carry, the release their Service names start with, a rate window of a few scrapes). A variable left over fails: Prometheus would refuse it anyway.
 */
export function withGrafanaVariables(expr: string, values: { namespace: string; rateInterval: string; release?: string }): string {
  const substituted = expr
    .replace(/\$__rate_interval\b|\$\{__rate_interval\}/g, values.rateInterval)
    .replace(/\$__interval\b|\$\{__interval\}/g, values.rateInterval)
    .replace(/\$__range\b|\$\{__range\}/g, '5m')
    .replace(/\$namespace\b|\$\{namespace\}/g, values.namespace)
    // The release's object-name prefix (the chart sets it; the test's targets are named hearth-api and so on).
    .replace(/\$release\b|\$\{release\}/g, values.release ?? 'hearth');
  const left = /\$\{?[A-Za-z_]+/.exec(substituted);
  if (left) throw new Error(`a Grafana variable without a value in the test: ${left[0]} in ${expr}`);
  return substituted;
}

export interface ScrapeTarget {
  url: string;
  labels: Record<string, string>;
}

export interface PrometheusServer {
  url: string;
  /** Answers the query's result, or throws with Prometheus's error. */
  query(promql: string): Promise<{ resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] }>;
  stop(): Promise<void>;
}

/** A Prometheus of the test's own on a free 127.0.0.1 port, scraping `targets` every `interval`. */
export async function startPrometheus(targets: ScrapeTarget[], interval = '1s'): Promise<PrometheusServer> {
  const binary = prometheusTool('prometheus');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-prometheus-'));
  const scrapeConfigs = targets.map((t, i) => ({
    job_name: `hearth-${i}`,
    scrape_interval: interval,
    scrape_timeout: interval,
    metrics_path: new URL(t.url).pathname,
    static_configs: [{ targets: [new URL(t.url).host], labels: t.labels }],
  }));
  fs.writeFileSync(
    path.join(dir, 'prometheus.yml'),
    JSON.stringify({ global: { scrape_interval: interval, evaluation_interval: interval }, scrape_configs: scrapeConfigs }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${stderr}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus not ready within 20 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // Prometheus hands new targets to its scrapers every 5 s: wait until every one has been scraped.
  for (;;) {
    const { data } = (await (await fetch(`${url}/api/v1/targets`)).json()) as { data: { activeTargets: { health: string }[] } };
    if (data.activeTargets.length === targets.length && data.activeTargets.every((t) => t.health === 'up')) break;
    if (Date.now() > deadline + 10_000) {
      await stop();
      throw new Error(`prometheus has not scraped every target: ${JSON.stringify(data.activeTargets)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    stop,
    query: async (promql) => {
      const res = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: promql })}`);
      const body = (await res.json()) as { status: string; error?: string; data: never };
      if (body.status !== 'success') throw new Error(`${body.error ?? res.status}`);
      return body.data;
    },
  };
}

/** Runs promtool; answers its status and output. */
export function promtool(args: string[]): { status: number; output: string } {
  const res = spawnSync(prometheusTool('promtool'), args, { encoding: 'utf8', timeout: 30_000 });
  if (res.error) throw res.error;
  return { status: res.status ?? -1, output: `${res.stdout}${res.stderr}` };
}
