/**
 * The chart's alerts as Prometheus reads them: `promtool check rules` on the PrometheusRule's groups
 * `helm template` renders, and every chart alert's runbook in docs/operations.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { CHART, FULL_VALUES, helm, templateArgs } from '../chart/chart';
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
  'HearthObjectsNotReady', // critical: ServerKey, GameEnvironment
  'HearthObjectsNotReady', // warning: every other kind
  'HearthOperatorNoLeader',
  'HearthOperatorAbsent',
  'HearthOperatorReconcileLag',
  'HearthOperatorQueueDepth',
  'HearthOperatorRestarting',
  'HearthCleanupStuck',
];
const OPERATOR_ALERTS = [
  'HearthObjectsNotReady',
  'HearthOperatorNoLeader',
  'HearthOperatorAbsent',
  'HearthOperatorReconcileLag',
  'HearthOperatorQueueDepth',
  'HearthOperatorRestarting',
  'HearthCleanupStuck',
];
/** The chart's default runbookUrl (values.yaml): the CI's full values leave it alone. */
const RUNBOOK_URL: string = parse(fs.readFileSync(path.join(CHART, 'values.yaml'), 'utf8')).metrics.prometheusRule.runbookUrl;

const groups = renderedRuleGroups();
const rules = groups.flatMap((g) => g.rules);

/**
 * `promtool test rules` on the rendered rules (annotations left out: `promtool check rules` covers
 * them), one minute between evaluations; answers promtool's status and output.
 */
function promtoolTest(tests: unknown[]): { status: number; output: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-rules-'));
  try {
    const bare = groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations: _annotations, ...rule }) => rule) }));
    fs.writeFileSync(path.join(dir, 'rules.yaml'), stringify({ groups: bare }));
    fs.writeFileSync(path.join(dir, 'tests.yaml'), stringify({ rule_files: ['rules.yaml'], evaluation_interval: '1m', tests }));
    return promtool(['test', 'rules', path.join(dir, 'tests.yaml')]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

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

test('the chart pages on what the SREs named, each alert with a severity, an absolute runbook link and its runbook section in docs/operations.md', () => {
  expect(rules.map((r) => r.alert)).toEqual([...CHART_ALERTS, 'HearthSaveWriteSurge']);
  // Followed from a pager, far from any checkout: an absolute http(s) URL, by default the published docs/operations.md.
  expect(new URL(RUNBOOK_URL)).toMatchObject({ protocol: 'https:', pathname: expect.stringMatching(/\/docs\/operations\.md$/) });
  // GitHub's anchors: a heading's text in lower case.
  const anchors = new Set(
    [...fs.readFileSync(OPERATIONS_DOC, 'utf8').matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
      m[1]
        .trim()
        .toLowerCase()
        .replace(/[^a-z0-9 -]/g, '')
        .replace(/ /g, '-'),
    ),
  );
  for (const rule of rules.filter((r) => CHART_ALERTS.includes(r.alert!))) {
    expect({ alert: rule.alert, severity: rule.labels?.severity }).toEqual({ alert: rule.alert, severity: expect.stringMatching(/^(warning|critical)$/) });
    const url = rule.annotations?.runbook_url ?? '';
    expect({ alert: rule.alert, url }).toEqual({ alert: rule.alert, url: `${RUNBOOK_URL}#${rule.alert!.toLowerCase()}` });
    expect({ alert: rule.alert, documented: anchors.has(rule.alert!.toLowerCase()) }).toEqual({ alert: rule.alert, documented: true });
  }
});

test('a runbook link that is not an absolute http(s) URL is refused: by the schema, and by the template when the schema is skipped', () => {
  for (const value of ['docs/operations.md', '/runbooks/operations.md', 'ftp://docs.example.com/operations.md', 'https://']) {
    const sets = [`metrics.prometheusRule.runbookUrl=${value}`];
    const bySchema = helm(templateArgs([FULL_VALUES], sets));
    expect({ value, status: bySchema.status, refusal: bySchema.stderr }).toEqual({
      value,
      status: 1,
      refusal: expect.stringMatching(/values don't meet the specifications of the schema[\s\S]*at '\/metrics\/prometheusRule\/runbookUrl'/),
    });
    const byTemplate = helm([...templateArgs([FULL_VALUES], sets), '--skip-schema-validation']);
    expect({ value, status: byTemplate.status, refusal: byTemplate.stderr }).toEqual({
      value,
      status: 1,
      refusal: expect.stringContaining('metrics.prometheusRule.runbookUrl must be an absolute http(s) URL'),
    });
  }
  // Your own copy is taken as it is.
  const own = helm(templateArgs([FULL_VALUES], ['metrics.prometheusRule.runbookUrl=https://git.example.com/ops/hearth/-/blob/v1/docs/operations.md']));
  expect(own.status).toBe(0);
  expect(own.stdout).toContain('runbook_url: "https://git.example.com/ops/hearth/-/blob/v1/docs/operations.md#hearthoperatorabsent"');
});

test("the operator's alerts only with an operator; the no-operator alert only with the chart's ServiceMonitor", () => {
  const res = helm([...templateArgs([FULL_VALUES], ['operator.enabled=false']), '--show-only', 'templates/monitoring/prometheusrule.yaml']);
  expect(res.status).toBe(0);
  const alerts = (parse(res.stdout) as { spec: { groups: { rules: { alert: string }[] }[] } }).spec.groups.flatMap((g) => g.rules.map((r) => r.alert));
  expect(alerts).toEqual([...CHART_ALERTS.filter((a) => !OPERATOR_ALERTS.includes(a)), 'HearthSaveWriteSurge']);
  // absent() relies on the `service` label the chart's ServiceMonitor gives: scraped another way, it would fire for ever.
  const own = helm([...templateArgs([FULL_VALUES], ['metrics.serviceMonitor.enabled=false']), '--show-only', 'templates/monitoring/prometheusrule.yaml']);
  expect(own.status).toBe(0);
  const ownAlerts = (parse(own.stdout) as { spec: { groups: { rules: { alert: string }[] }[] } }).spec.groups.flatMap((g) => g.rules.map((r) => r.alert));
  expect(ownAlerts).toEqual([...CHART_ALERTS.filter((a) => a !== 'HearthOperatorAbsent'), 'HearthSaveWriteSurge']);
});

/**
 * `promtool test rules`: the alerts an SRE would otherwise miss fire on the series that mean trouble,
 * after their `for`, with the labels that route and explain them; and stay quiet on healthy series.
 * (Annotations are left out of the file under test: `promtool check rules` above covers them.)
 */
test('the not-Ready (severity by kind), no-leader, dependency and fail-open alerts fire on the series that call for them, and only then', () => {
  const at = (labels: string) => `{namespace="hearth-system", service="hearth-${labels}}`;
  const tests = [
    {
      interval: '1m',
      input_series: [
        // A ServerKey past its plan's limit, a GameEnvironment failing, and a Project naming a missing plan, for 30 minutes.
        { series: `hearth_operator_objects_not_ready${at('operator", pod="op-a", kind="ServerKey", reason="PlanLimit"')}`, values: '1x30' },
        { series: `hearth_operator_objects_not_ready${at('operator", pod="op-a", kind="GameEnvironment", reason="Retrying"')}`, values: '1x30' },
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
          // A ServerKey or GameEnvironment not Ready pages; a Project goes to the channel.
          exp_alerts: [
            { exp_labels: { severity: 'critical', kind: 'GameEnvironment', reason: 'Retrying' } },
            { exp_labels: { severity: 'critical', kind: 'ServerKey', reason: 'PlanLimit' } },
            { exp_labels: { severity: 'warning', kind: 'Project', reason: 'MissingReference' } },
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
      alert_rule_test: ['HearthObjectsNotReady', 'HearthOperatorNoLeader', 'HearthDependencyDown', 'HearthRateLimitFailOpen'].map((alertname) => ({
        eval_time: '25m',
        alertname,
        exp_alerts: [],
      })),
    },
  ];
  const { status, output } = promtoolTest(tests);
  expect({ status, output }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
});

test("the commerce report's alerts: no successful tick for 30 minutes, a project's cursor lagging an hour; quiet while ticks succeed and cursors keep up", () => {
  const worker = (labels: string) => `{namespace="hearth-system", service="hearth-crash-worker", ${labels}}`;
  const tests = [
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
  ];
  const { status, output } = promtoolTest(tests);
  expect({ status, output }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
});

test("the operator's own alerts: none scraped, reconcile lag, a deep queue, restarts, a cleanup stuck; each after its `for`, with its labels, and quiet on a healthy operator", () => {
  const operator = (labels = '') => `{namespace="hearth-system", service="hearth-operator"${labels ? `, ${labels}` : ''}}`;
  const api = (labels: string) => `{namespace="hearth-system", service="hearth-api", ${labels}}`;
  /** `n + 1` samples, one a minute: `value(minute)`. */
  const values = (n: number, value: (minute: number) => number) => Array.from({ length: n + 1 }, (_, m) => value(m)).join(' ');
  const tests = [
    {
      // Trouble: no operator pod scraped (only the API is), while the last leader's figures say
      // ServerKey changes wait ever longer, Projects queue deep, a GameEnvironment's cleanup is stuck,
      // and a pod (scraped earlier, under another name) restarts three times.
      interval: '1m',
      input_series: [
        { series: `up${api('pod="api-a"')}`, values: '1x40' },
        { series: `hearth_operator_queue_oldest_seconds${operator('pod="op-a", kind="ServerKey"')}`, values: '0+60x40' },
        { series: `hearth_operator_queue_oldest_seconds${operator('pod="op-b", kind="ServerKey"')}`, values: '0x40' }, // the standby
        { series: `hearth_operator_queue_oldest_seconds${operator('pod="op-a", kind="Project"')}`, values: '2x40' },
        { series: `hearth_operator_queue_depth${operator('pod="op-a", kind="Project"')}`, values: '150x40' },
        { series: `hearth_operator_queue_depth${operator('pod="op-a", kind="ServerKey"')}`, values: '3x40' },
        { series: `hearth_operator_terminating_oldest_seconds${operator('pod="op-a", kind="GameEnvironment"')}`, values: '0+60x40' },
        { series: `hearth_operator_terminating_oldest_seconds${operator('pod="op-a", kind="ServerKey"')}`, values: '0x40' },
        { series: `process_start_time_seconds${operator('pod="op-c"')}`, values: values(40, (m) => 100 + 300 * Math.min(3, Math.floor(m / 6))) },
      ],
      alert_rule_test: [
        { eval_time: '3m', alertname: 'HearthOperatorAbsent', exp_alerts: [] }, // not yet 5 minutes
        // absent() names the Service it looked for: the API's `up` does not hide the operator's absence.
        {
          eval_time: '10m',
          alertname: 'HearthOperatorAbsent',
          exp_alerts: [{ exp_labels: { severity: 'critical', namespace: 'hearth-system', service: 'hearth-operator' } }],
        },
        { eval_time: '14m', alertname: 'HearthOperatorReconcileLag', exp_alerts: [] }, // above 5 minutes since 6m: not yet 10 minutes
        { eval_time: '20m', alertname: 'HearthOperatorReconcileLag', exp_alerts: [{ exp_labels: { severity: 'critical', kind: 'ServerKey' } }] },
        { eval_time: '10m', alertname: 'HearthOperatorQueueDepth', exp_alerts: [] },
        { eval_time: '20m', alertname: 'HearthOperatorQueueDepth', exp_alerts: [{ exp_labels: { severity: 'warning', kind: 'Project' } }] },
        { eval_time: '15m', alertname: 'HearthOperatorRestarting', exp_alerts: [] }, // two restarts so far
        {
          eval_time: '20m',
          alertname: 'HearthOperatorRestarting',
          exp_alerts: [{ exp_labels: { severity: 'warning', namespace: 'hearth-system', service: 'hearth-operator', pod: 'op-c' } }],
        },
        { eval_time: '19m', alertname: 'HearthCleanupStuck', exp_alerts: [] }, // stuck past 15 minutes since 16m: not yet 5 more
        { eval_time: '25m', alertname: 'HearthCleanupStuck', exp_alerts: [{ exp_labels: { severity: 'warning', kind: 'GameEnvironment' } }] },
      ],
    },
    {
      // Healthy: two operator pods scraped, queues that fill at each relist and drain, one restart
      // (a node drain), a cleanup that took 10 minutes and finished; the API restarting often is not
      // the operator's.
      interval: '1m',
      input_series: [
        { series: `up${operator('pod="op-a"')}`, values: '1x40' },
        { series: `up${operator('pod="op-b"')}`, values: '1x40' },
        { series: `hearth_operator_queue_oldest_seconds${operator('pod="op-a", kind="ServerKey"')}`, values: values(40, (m) => (m % 5 === 0 ? 20 : 0)) },
        { series: `hearth_operator_queue_depth${operator('pod="op-a", kind="Project"')}`, values: values(40, (m) => (m % 5 === 0 ? 500 : 0)) },
        {
          series: `hearth_operator_terminating_oldest_seconds${operator('pod="op-a", kind="GameEnvironment"')}`,
          values: values(40, (m) => (m <= 10 ? 60 * m : 0)),
        },
        { series: `process_start_time_seconds${operator('pod="op-a"')}`, values: values(40, (m) => (m < 10 ? 100 : 700)) },
        { series: `process_start_time_seconds${api('pod="api-a"')}`, values: values(40, (m) => 100 + 60 * m) },
      ],
      alert_rule_test: [
        'HearthOperatorAbsent',
        'HearthOperatorReconcileLag',
        'HearthOperatorQueueDepth',
        'HearthOperatorRestarting',
        'HearthCleanupStuck',
      ].flatMap((alertname) => ['15m', '25m', '35m'].map((eval_time) => ({ eval_time, alertname, exp_alerts: [] }))),
    },
  ];
  const { status, output } = promtoolTest(tests);
  expect({ status, output }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
});
