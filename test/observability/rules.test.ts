/**
 * The chart's alerts as Prometheus reads them: `promtool check rules` on the PrometheusRule's groups
 * `helm template` renders, and every chart alert's runbook in docs/operations.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { OPERATIONS_DOC, promtool, renderedRuleGroups } from './prometheus';

const CHART_ALERTS = [
  'HearthTargetDown',
  'HearthApiServerErrors',
  'HearthApiLatencyHigh',
  'HearthRateLimitRefusalSurge',
  'HearthRealtimeSocketDrops',
  'HearthCrashQueueBacklog',
  'HearthCommerceReportStale',
  'HearthCommerceReportLagging',
  'HearthReconcileFailures',
  'HearthDependencyDown',
  'HearthRateLimitFailOpen',
  'HearthObjectsNotReady',
  'HearthOperatorNoLeader',
];

const groups = renderedRuleGroups();
const rules = groups.flatMap((g) => g.rules);

test('promtool check rules accepts the rendered rules', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-rules-'));
  try {
    const file = path.join(dir, 'rules.yaml');
    fs.writeFileSync(file, stringify({ groups }));
    const { status, output } = promtool(['check', 'rules', file]);
    expect({ status, output }).toEqual({ status: 0, output: expect.stringContaining(`SUCCESS: ${rules.length} rules found`) });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the chart pages on what the SREs named, each alert with a severity and its runbook section in docs/operations.md', () => {
  expect(rules.map((r) => r.alert)).toEqual([...CHART_ALERTS, 'HearthSaveWriteSurge']);
  // GitHub's anchors: a heading's text in lower case.
  const anchors = new Set([...fs.readFileSync(OPERATIONS_DOC, 'utf8').matchAll(/^#{2,4} (.+)$/gm)].map((m) => m[1].trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
  for (const rule of rules.filter((r) => CHART_ALERTS.includes(r.alert!))) {
    expect({ alert: rule.alert, severity: rule.labels?.severity }).toEqual({ alert: rule.alert, severity: expect.stringMatching(/^(warning|critical)$/) });
    const url = rule.annotations?.runbook_url ?? '';
    expect({ alert: rule.alert, url }).toEqual({ alert: rule.alert, url: `docs/operations.md#${rule.alert!.toLowerCase()}` });
    expect({ alert: rule.alert, documented: anchors.has(rule.alert!.toLowerCase()) }).toEqual({ alert: rule.alert, documented: true });
  }
});

/**
 * `promtool test rules`: the alerts an SRE would otherwise miss fire on the series that mean trouble,
 * after their `for`, with the labels that route and explain them; and stay quiet on healthy series.
 * (Annotations are left out of the file under test: `promtool check rules` above covers them.)
 */
test('the not-Ready, no-leader, dependency and fail-open alerts fire on the series that call for them, and only then', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-rules-'));
  try {
    const bare = groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations: _annotations, ...rule }) => rule) }));
    fs.writeFileSync(path.join(dir, 'rules.yaml'), stringify({ groups: bare }));
    const at = (labels: string) => `{namespace="hearth-system", service="hearth-${labels}}`;
    const tests = {
      rule_files: ['rules.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            // A ServerKey past its plan's limit, and a Project naming a missing plan, for 30 minutes.
            { series: `hearth_operator_objects_not_ready${at('operator", pod="op-a", kind="ServerKey", reason="PlanLimit"')}`, values: '1x30' },
            { series: `hearth_operator_objects_not_ready${at('operator", pod="op-a", kind="Project", reason="MissingReference"')}`, values: '2x30' },
            // Two operator replicas, neither leading.
            { series: `hearth_operator_leader${at('operator", pod="op-a"')}`, values: '0x30' },
            { series: `hearth_operator_leader${at('operator", pod="op-b"')}`, values: '0x30' },
            // One API pod cut off from Redis; PostgreSQL fine.
            { series: `hearth_dependency_up${at('api", pod="api-a", dependency="redis"')}`, values: '0x30' },
            { series: `hearth_dependency_up${at('api", pod="api-b", dependency="redis"')}`, values: '1x30' },
            { series: `hearth_dependency_up${at('api", pod="api-a", dependency="postgres"')}`, values: '1x30' },
            // Meanwhile the API's rate limits fail open.
            { series: `hearth_rate_limit_fail_open_total${at('api", pod="api-a"')}`, values: '0+30x30' },
          ],
          alert_rule_test: [
            { eval_time: '10m', alertname: 'HearthObjectsNotReady', exp_alerts: [] }, // not yet 15 minutes
            {
              eval_time: '20m',
              alertname: 'HearthObjectsNotReady',
              exp_alerts: [
                { exp_labels: { severity: 'warning', kind: 'Project', reason: 'MissingReference' } },
                { exp_labels: { severity: 'warning', kind: 'ServerKey', reason: 'PlanLimit' } },
              ],
            },
            { eval_time: '3m', alertname: 'HearthOperatorNoLeader', exp_alerts: [] },
            { eval_time: '10m', alertname: 'HearthOperatorNoLeader', exp_alerts: [{ exp_labels: { severity: 'critical' } }] },
            { eval_time: '5m', alertname: 'HearthDependencyDown', exp_alerts: [{ exp_labels: { severity: 'critical', dependency: 'redis' } }] },
            { eval_time: '10m', alertname: 'HearthRateLimitFailOpen', exp_alerts: [{ exp_labels: { severity: 'warning' } }] },
          ],
        },
        {
          // Healthy: everything Ready, one leader, dependencies up, no fail-open: nothing fires.
          interval: '1m',
          input_series: [
            { series: `hearth_operator_objects_not_ready${at('operator", pod="op-a", kind="ServerKey", reason="PlanLimit"')}`, values: '0x30' },
            { series: `hearth_operator_leader${at('operator", pod="op-a"')}`, values: '1x30' },
            { series: `hearth_operator_leader${at('operator", pod="op-b"')}`, values: '0x30' },
            { series: `hearth_dependency_up${at('api", pod="api-a", dependency="redis"')}`, values: '1x30' },
            { series: `hearth_rate_limit_fail_open_total${at('api", pod="api-a"')}`, values: '5x30' },
          ],
          alert_rule_test: ['HearthObjectsNotReady', 'HearthOperatorNoLeader', 'HearthDependencyDown', 'HearthRateLimitFailOpen'].map((alertname) => ({ eval_time: '25m', alertname, exp_alerts: [] })),
        },
      ],
    };
    fs.writeFileSync(path.join(dir, 'tests.yaml'), stringify(tests));
    const { status, output } = promtool(['test', 'rules', path.join(dir, 'tests.yaml')]);
    expect({ status, output }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the commerce report's alerts: no successful tick for 30 minutes, a project's cursor lagging an hour; quiet while ticks succeed and cursors keep up", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-rules-'));
  try {
    const bare = groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations: _annotations, ...rule }) => rule) }));
    fs.writeFileSync(path.join(dir, 'rules.yaml'), stringify({ groups: bare }));
    const worker = (labels: string) => `{namespace="hearth-system", service="hearth-crash-worker", ${labels}}`;
    const tests = {
      rule_files: ['rules.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          // Both workers last succeeded 10 minutes in (one never did); the project shop's cursor has not moved since the start.
          interval: '1m',
          input_series: [
            { series: `hearth_commerce_report_last_success_timestamp_seconds${worker('pod="w-a"')}`, values: '600x90' },
            { series: `hearth_commerce_report_last_success_timestamp_seconds${worker('pod="w-b"')}`, values: '0x90' },
            { series: `hearth_commerce_report_cursor_lag_seconds${worker('pod="w-a", project="shop"')}`, values: '0+60x90' },
            { series: `hearth_commerce_report_cursor_lag_seconds${worker('pod="w-b", project="shop"')}`, values: '0+60x90' },
            { series: `hearth_commerce_report_cursor_lag_seconds${worker('pod="w-a", project="quiet"')}`, values: '60x90' },
          ],
          alert_rule_test: [
            { eval_time: '45m', alertname: 'HearthCommerceReportStale', exp_alerts: [] }, // stale since 40m: not yet 10 minutes
            { eval_time: '55m', alertname: 'HearthCommerceReportStale', exp_alerts: [{ exp_labels: { severity: 'warning' } }] },
            { eval_time: '70m', alertname: 'HearthCommerceReportLagging', exp_alerts: [] }, // lagging since 61m: not yet 15 minutes
            { eval_time: '80m', alertname: 'HearthCommerceReportLagging', exp_alerts: [{ exp_labels: { severity: 'warning', project: 'shop' } }] },
          ],
        },
        {
          // Healthy: a worker succeeds every minute, the cursors keep up; a worker with the job switched off (0) says nothing.
          interval: '1m',
          input_series: [
            { series: `hearth_commerce_report_last_success_timestamp_seconds${worker('pod="w-a"')}`, values: '60+60x90' },
            { series: `hearth_commerce_report_last_success_timestamp_seconds${worker('pod="w-b"')}`, values: '0x90' },
            { series: `hearth_commerce_report_cursor_lag_seconds${worker('pod="w-a", project="shop"')}`, values: '60x90' },
          ],
          alert_rule_test: ['HearthCommerceReportStale', 'HearthCommerceReportLagging'].map((alertname) => ({ eval_time: '85m', alertname, exp_alerts: [] })),
        },
        {
          // The job switched off on every worker: nothing to be stale.
          interval: '1m',
          input_series: [{ series: `hearth_commerce_report_last_success_timestamp_seconds${worker('pod="w-a"')}`, values: '0x90' }],
          alert_rule_test: [{ eval_time: '85m', alertname: 'HearthCommerceReportStale', exp_alerts: [] }],
        },
      ],
    };
    fs.writeFileSync(path.join(dir, 'tests.yaml'), stringify(tests));
    const { status, output } = promtool(['test', 'rules', path.join(dir, 'tests.yaml')]);
    expect({ status, output }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
