/**
 * The hot path's series metrics (core process/series-metrics.ts) are read by prom-client's registry:
 * their exposition must be what prom-client writes for its own counter and histogram given the same
 * updates, in both exposition formats, so dashboards and alerts read them the same.
 */
import client from 'prom-client';
import { SeriesCounter, SeriesHistogram } from '@hearth/core/process';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVED: [string, string, number][] = [
  ['/a', '200', 0.0005],
  ['/a', '200', 0.001], // on a bound: counted in that bucket (le)
  ['/a', '200', 0.05],
  ['/a', '500', 3], // past every bound: +Inf only
  ['/b', '200', 0.01],
];

async function exposition(contentType: string, fill: (registry: client.Registry) => void): Promise<string> {
  const registry = new client.Registry();
  registry.setContentType(contentType as never);
  fill(registry);
  return registry.metrics();
}

test.each([client.Registry.PROMETHEUS_CONTENT_TYPE, client.Registry.OPENMETRICS_CONTENT_TYPE])(
  "a series counter and histogram expose what prom-client's own do (%s)",
  async (contentType) => {
    const ours = await exposition(contentType, (registry) => {
      const counter = new SeriesCounter('probe_requests_total', 'Requests', ['route', 'status']);
      const histogram = new SeriesHistogram('probe_duration_seconds', 'Duration', ['route', 'status'], BUCKETS);
      registry.registerMetric(counter as never);
      registry.registerMetric(histogram as never);
      for (const [route, status, seconds] of OBSERVED) {
        counter.series(route, status).inc();
        histogram.series(route, status).observe(seconds);
      }
      counter.series('/b', '200').inc(4);
    });
    const theirs = await exposition(contentType, (registry) => {
      const counter = new client.Counter({ name: 'probe_requests_total', help: 'Requests', labelNames: ['route', 'status'], registers: [registry] });
      const histogram = new client.Histogram({
        name: 'probe_duration_seconds',
        help: 'Duration',
        labelNames: ['route', 'status'],
        buckets: BUCKETS,
        registers: [registry],
      });
      for (const [route, status, seconds] of OBSERVED) {
        counter.inc({ route, status });
        histogram.observe({ route, status }, seconds);
      }
      counter.inc({ route: '/b', status: '200' }, 4);
    });
    expect(ours).toBe(theirs);
    expect(ours).toContain('probe_duration_seconds_bucket{le="0.001",route="/a",status="200"} 2');
    expect(ours).toContain('probe_duration_seconds_bucket{le="+Inf",route="/a",status="500"} 1');
  },
);

test('a series is kept by its label values; the label count is checked; reset empties', () => {
  const counter = new SeriesCounter('probe_total', 'Probe', ['kind']);
  expect(counter.series('x')).toBe(counter.series('x'));
  expect(() => counter.series('x', 'y')).toThrow(/takes 1 label values/);
  counter.series('x').inc(2);
  expect(counter.get().values).toEqual([{ value: 2, labels: { kind: 'x' } }]);
  counter.reset();
  expect(counter.get().values).toEqual([]);
  expect(() => new SeriesHistogram('probe_seconds', 'Probe', [], [1, 0.5])).toThrow(/buckets must rise/);
});
