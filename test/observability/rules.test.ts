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
  'HearthReconcileFailures',
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
  expect(rules.map((r) => r.alert)).toEqual([...CHART_ALERTS, 'HearthRateLimitFailOpen']);
  // GitHub's anchors: a heading's text in lower case.
  const anchors = new Set([...fs.readFileSync(OPERATIONS_DOC, 'utf8').matchAll(/^#{2,4} (.+)$/gm)].map((m) => m[1].trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
  for (const rule of rules.filter((r) => CHART_ALERTS.includes(r.alert!))) {
    expect({ alert: rule.alert, severity: rule.labels?.severity }).toEqual({ alert: rule.alert, severity: expect.stringMatching(/^(warning|critical)$/) });
    const url = rule.annotations?.runbook_url ?? '';
    expect({ alert: rule.alert, url }).toEqual({ alert: rule.alert, url: `docs/operations.md#${rule.alert!.toLowerCase()}` });
    expect({ alert: rule.alert, documented: anchors.has(rule.alert!.toLowerCase()) }).toEqual({ alert: rule.alert, documented: true });
  }
});
