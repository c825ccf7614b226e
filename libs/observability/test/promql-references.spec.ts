import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { TrellisMetrics } from '../src';

const ROOT = resolve(__dirname, '../../..');

/** Metrics Prometheus itself records about every target; everything else must be ours. */
const PROMETHEUS_METRICS = new Set(['up']);

/** Grafana's variables, replaced by something of the same type so the query parses. */
function withoutGrafanaVariables(expr: string): string {
  return expr
    .replace(/\$__(rate_interval|interval|range)\b/g, '5m')
    .replace(/\$\{?[a-zA-Z_]+\}?/g, 'x');
}

interface Query {
  readonly where: string;
  readonly expr: string;
}

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

function dashboardQueries(file: string): Query[] {
  const dashboard = JSON.parse(readFileSync(file, 'utf8')) as { panels?: Panel[]; templating?: { list?: { name: string; definition?: string }[] } };
  const queries: Query[] = [];
  const walk = (panels: Panel[] | undefined) => {
    for (const panel of panels ?? []) {
      for (const target of panel.targets ?? []) if (target.expr) queries.push({ where: `${file} / ${panel.title}`, expr: target.expr });
      walk(panel.panels);
    }
  };
  walk(dashboard.panels);
  for (const variable of dashboard.templating?.list ?? []) {
    // label_values(metric, label) is Grafana syntax around a metric name, not PromQL.
    const metric = /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,/.exec(variable.definition ?? '')?.[1];
    if (metric) queries.push({ where: `${file} / $${variable.name}`, expr: metric });
  }
  return queries;
}

function ruleQueries(file: string): Query[] {
  const rules = parseYaml(readFileSync(file, 'utf8')) as { groups: { name: string; rules: { alert?: string; record?: string; expr: string }[] }[] };
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `${file} / ${r.alert ?? r.record}`, expr: String(r.expr) })));
}

/** Prometheus's own PromQL grammar (the one its web UI uses); an ES module, hence the dynamic import. */
async function loadParser() {
  return (await import('@prometheus-io/lezer-promql')).parser;
}

let parser: Awaited<ReturnType<typeof loadParser>>;

/** Parses with Prometheus's own grammar; returns the syntax errors' offsets and the metric names used. */
function analyse(expr: string): { errors: number[]; metrics: string[] } {
  const source = withoutGrafanaVariables(expr);
  const tree = parser.parse(source);
  const errors: number[] = [];
  const metrics: string[] = [];
  const cursor = tree.cursor();
  do {
    if (cursor.type.isError) errors.push(cursor.from);
    if (cursor.name === 'Identifier' && cursor.node.parent?.name === 'VectorSelector') metrics.push(source.slice(cursor.from, cursor.to));
  } while (cursor.next());
  return { errors, metrics };
}

async function exportedMetricNames(): Promise<Set<string>> {
  const metrics = new TrellisMetrics('test');
  const names = new Set<string>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
    if (String(metric.type) === 'summary') for (const suffix of ['_sum', '_count']) names.add(metric.name + suffix);
  }
  return names;
}

const dashboardFiles = ['deploy/grafana', 'helm/trellis/dashboards'].flatMap((dir) =>
  readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith('.json'))
    .map((f) => join(ROOT, dir, f)),
);
const ruleFiles = readdirSync(join(ROOT, 'deploy/prometheus'))
  .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
  .map((f) => join(ROOT, 'deploy/prometheus', f));

describe('PromQL in dashboards and alert rules', () => {
  beforeAll(async () => {
    parser = await loadParser();
  });

  const queries = [...dashboardFiles.flatMap(dashboardQueries), ...ruleFiles.flatMap(ruleQueries)];

  it('finds the four dashboards and the alert rules', () => {
    expect(readdirSync(join(ROOT, 'deploy/grafana')).filter((f) => f.endsWith('.json')).sort()).toEqual([
      'trellis-indexing-pipeline.json',
      'trellis-llm-usage.json',
      'trellis-overview.json',
      'trellis-retrieval-chat.json',
    ]);
    const alerts = ruleFiles.flatMap(ruleQueries).map((q) => q.where.split(' / ')[1]);
    for (const alert of ['TrellisConsumerLagGrowing', 'TrellisConsumerStalled', 'TrellisConsumerCrashing', 'TrellisDeadLetters', 'TrellisGrpcErrorRatio', 'TrellisQueryLatencyHigh', 'TrellisLlmErrorSpike', 'TrellisServiceNotReady', 'TrellisServiceDown']) {
      expect(alerts).toContain(alert);
    }
  });

  it('ships the same dashboards in the Helm chart as under deploy/grafana', () => {
    for (const file of readdirSync(join(ROOT, 'deploy/grafana')).filter((f) => f.endsWith('.json'))) {
      expect(readFileSync(join(ROOT, 'helm/trellis/dashboards', file), 'utf8'), file).toBe(readFileSync(join(ROOT, 'deploy/grafana', file), 'utf8'));
    }
  });

  it('every expression parses', () => {
    expect(queries.length).toBeGreaterThan(30);
    const broken = queries.filter((q) => analyse(q.expr).errors.length > 0).map((q) => `${q.where}: ${q.expr}`);
    expect(broken).toEqual([]);
  });

  it('every metric an expression names is one the code exports', async () => {
    const exported = await exportedMetricNames();
    const unknown = queries.flatMap((q) => analyse(q.expr).metrics.filter((m) => !exported.has(m) && !PROMETHEUS_METRICS.has(m)).map((m) => `${q.where}: ${m}`));
    expect(unknown).toEqual([]);
  });

  it('the Helm chart PrometheusRule names only exported trellis_ metrics', async () => {
    const exported = await exportedMetricNames();
    const template = readFileSync(join(ROOT, 'helm/trellis/templates/prometheusrule.yaml'), 'utf8');
    const used = [...template.matchAll(/\btrellis_[a-z0-9_]+/g)].map((m) => m[0]);
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((m) => !exported.has(m))).toEqual([]);
  });

  it('the checker itself rejects bad syntax and unknown metrics', async () => {
    expect(analyse('sum(rate(trellis_grpc_requests_total[5m])').errors.length).toBeGreaterThan(0);
    expect(analyse('rate(trellis_grpc_requests_total{code="OK"}[$__rate_interval])').errors).toEqual([]);
    const exported = await exportedMetricNames();
    expect(analyse('sum(trellis_no_such_metric) + trellis_grpc_request_duration_seconds_bucket').metrics.filter((m) => !exported.has(m))).toEqual(['trellis_no_such_metric']);
  });
});
