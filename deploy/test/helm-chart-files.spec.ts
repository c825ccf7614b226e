import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { KUBE_VERSIONS, assertToolsInstalled, chartDir, helm, helmTemplate, kubeconform, parseYamlFile, repoRoot, templateArgs } from './deploy-tools';
import { ALL_FEATURES, SERVICES, component, ofKind, parseManifests, podTemplate, render, specOf } from './deploy-tools';
import type { Manifest, TemplateOptions } from './deploy-tools';

// The chart's own files beside its workloads: the values schema refusing bad values, the
// skaffold dev loop over the chart, NOTES.txt, the documentation of every value, and the
// monitoring it ships (ServiceMonitor, alerts, Grafana dashboards).

beforeAll(() => {
  assertToolsInstalled();
});

describe('values.schema.json', () => {
  const rejects = (options: TemplateOptions, message: RegExp) => {
    const result = helm(templateArgs(options));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(message);
  };

  it('rejects negative replicas', () => rejects({ set: { 'services.chat.replicas': '-1' } }, /replicas/));
  it('rejects an unknown top-level key', () => rejects({ set: { replicaCount: '3' } }, /replicaCount/));
  it('rejects an unknown key inside a service', () => rejects({ set: { 'services.chat.replica': '3' } }, /replica/));
  it('rejects an unknown log level', () => rejects({ setString: { 'config.logLevel': 'loud' } }, /logLevel/));
  it('rejects a broker that is not host:port', () => rejects({ setString: { 'kafka.brokers[0]': 'kafka.svc' } }, /brokers/));
  it('rejects a resource without limits', () => rejects({ set: { 'services.chat.resources.limits': 'null' } }, /limits/));
  it('rejects an external service that is not a gRPC service', () => rejects({ setString: { 'networkPolicy.externalServices[0]': 'chunking' } }, /externalServices/));
  it('requires the dev Secret values when the dev Secret is enabled', () => rejects({ set: { 'secrets.devSecret.create': 'true' } }, /devSecret.dbUrl/));
  it('requires a parent Gateway for the GRPCRoute', () => rejects({ set: { 'gateway.enabled': 'true' } }, /parentRefs/));
  it('refuses KEDA on a service that consumes no topic', () => rejects({ set: { 'services.chat.keda.enabled': 'true' } }, /only chunking, extraction and graph-store/));
});

describe('skaffold.yaml', () => {
  interface Artifact {
    image: string;
    context: string;
    docker: { dockerfile: string; buildArgs: Record<string, string> };
  }
  interface Release {
    chartPath: string;
    valuesFiles: string[];
    setValueTemplates: Record<string, string>;
  }
  interface Skaffold {
    apiVersion: string;
    build: { artifacts: Artifact[] };
    deploy: { helm: { releases: Release[] } };
    profiles: { name: string; patches: { op: string; path: string; value: unknown }[] }[];
  }
  const skaffold = () => parseYamlFile(join(repoRoot, 'skaffold.yaml')) as Skaffold;

  it('builds the seven images from the one Dockerfile with SERVICE build args', () => {
    const config = skaffold();
    expect(config.apiVersion).toMatch(/^skaffold\/v4beta\d+$/);
    expect(config.build.artifacts.map((a) => [a.image, a.docker.buildArgs.SERVICE])).toEqual(SERVICES.map((s) => [`trellis-${s}`, s]));
    for (const artifact of config.build.artifacts) {
      expect(existsSync(join(repoRoot, artifact.context, artifact.docker.dockerfile))).toBe(true);
    }
  });

  it('deploys the chart with each image, and its dev profile renders valid manifests', () => {
    const config = skaffold();
    const release = config.deploy.helm.releases[0] as Release;
    expect(release.chartPath).toBe('helm/trellis');
    // What skaffold would pass: each {{.IMAGE_REPO_x}} / {{.IMAGE_TAG_x}} filled in.
    const setString = Object.fromEntries(
      Object.entries(release.setValueTemplates).map(([key, template]) => [key, template.replace(/\{\{\.IMAGE_REPO_(\w+)\}\}/, 'localhost:5000/$1').replace(/\{\{\.IMAGE_TAG_(\w+)\}\}/, 'tag-$1')]),
    );
    const dev = config.profiles.find((p) => p.name === 'dev');
    const devValues = (dev?.patches ?? []).filter((p) => p.path.endsWith('/valuesFiles/-')).map((p) => p.value as string);
    expect(devValues).toEqual(['helm/trellis/examples/values-dev.yaml']);
    const yaml = helmTemplate({ values: devValues, setString });
    expect(kubeconform(yaml, KUBE_VERSIONS[1]).problems).toEqual([]);
    const manifests = parseManifests(yaml);
    for (const deployment of ofKind(manifests, 'Deployment')) {
      const name = component(deployment) ?? '';
      expect(podTemplate(deployment).spec.containers[0]?.image).toBe(`localhost:5000/trellis_${name.replace('-', '_')}:tag-trellis_${name.replace('-', '_')}`);
      expect(specOf<{ replicas: number }>(deployment).replicas).toBe(1);
    }
    expect(ofKind(manifests, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(ofKind(manifests, 'ConfigMap')[0]?.data?.TRELLIS_LOG_LEVEL).toBe('debug');
  });
});

describe('chart files', () => {
  // `helm template` skips NOTES.txt and `helm install --dry-run` wants a cluster: render it
  // through `tpl` in a throw-away copy of the chart.
  it.each([
    ['default', [] as string[]],
    ['all features', [ALL_FEATURES]],
  ])('NOTES.txt renders with %s values', (_name, values) => {
    const copy = mkdtempSync(join(tmpdir(), 'trellis-chart-'));
    try {
      cpSync(chartDir, copy, { recursive: true });
      cpSync(join(chartDir, 'templates/NOTES.txt'), join(copy, 'notes/NOTES.txt'));
      writeFileSync(
        join(copy, 'templates/zz-notes.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  notes: {{ tpl (.Files.Get "notes/NOTES.txt") . | quote }}\n',
      );
      const result = helm(['template', 'trellis', copy, '--namespace', 'trellis', '--kube-version', KUBE_VERSIONS[0], '--show-only', 'templates/zz-notes.yaml', ...values.flatMap((v) => ['--values', join(repoRoot, v)])]);
      expect(result.stderr).toBe('');
      const notes = parseManifests(result.stdout)[0]?.data?.notes ?? '';
      expect(notes).toContain('kubectl -n trellis port-forward svc/trellis-chat 50051:50051');
      expect(notes).not.toContain('<no value>');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('documents every top-level value in values.yaml in the schema', () => {
    const schema = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8')) as { properties: Record<string, unknown>; additionalProperties: boolean };
    expect(schema.additionalProperties).toBe(false);
    const topLevel = readFileSync(join(chartDir, 'values.yaml'), 'utf8')
      .split('\n')
      .filter((line) => /^[A-Za-z]/.test(line))
      .map((line) => line.split(':')[0] ?? '');
    for (const key of topLevel) expect(Object.keys(schema.properties)).toContain(key);
  });
});

describe('observability', () => {
  it('ServiceMonitor scrapes the metrics port of every Service of the release', () => {
    const all = render('all features');
    const monitor = ofKind(all, 'ServiceMonitor')[0];
    const spec = specOf<{ selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string }[] }>(monitor as Manifest);
    expect(spec.endpoints.map((e) => [e.port, e.path])).toEqual([['metrics', '/metrics']]);
    for (const service of ofKind(all, 'Service')) {
      for (const [key, value] of Object.entries(spec.selector.matchLabels)) expect(service.metadata.labels?.[key]).toBe(value);
    }
  });

  it('PrometheusRule alerts on readiness, dead letters, gRPC errors and latency, and consumer lag', () => {
    const rule = ofKind(render('all features'), 'PrometheusRule')[0] as Manifest;
    const rules = specOf<{ groups: { rules: { alert: string; expr: string }[] }[] }>(rule).groups.flatMap((g) => g.rules);
    const expr = (alert: string) => rules.find((r) => r.alert === alert)?.expr ?? '';
    expect(expr('TrellisServiceNotReady')).toContain('kube_deployment_status_replicas_available');
    expect(expr('TrellisDeadLetters')).toContain('trellis_events_handled_total');
    expect(expr('TrellisDeadLetters')).toContain('outcome="dead_letter"');
    expect(expr('TrellisGrpcErrorRatio')).toContain('trellis_grpc_requests_total');
    expect(expr('TrellisGrpcLatencyHigh')).toContain('trellis_grpc_request_duration_seconds_bucket');
    expect(expr('TrellisConsumerLagGrowing')).toContain('deriv(trellis_consumer_lag_messages{');
    expect(expr('TrellisConsumerStalled')).toContain('trellis_consumer_lag_messages{');
    expect(expr('TrellisConsumerCrashing')).toContain('increase(trellis_consumer_crashes_total{');
  });

  it('ships every dashboard as a ConfigMap with the Grafana sidecar label, holding valid dashboard JSON', () => {
    const files = readdirSync(join(chartDir, 'dashboards')).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    const maps = ofKind(render('all features'), 'ConfigMap').filter((m) => m.metadata.labels?.grafana_dashboard === '1');
    expect(maps).toHaveLength(files.length);
    for (const map of maps) {
      expect(map.metadata.namespace).toBe('monitoring');
      for (const [file, content] of Object.entries(map.data ?? {})) {
        expect(files).toContain(file);
        const dashboard = JSON.parse(content) as { uid?: string; title?: string; panels?: unknown[] };
        expect(dashboard.uid).toBeTruthy();
        expect(dashboard.title).toBeTruthy();
        expect(dashboard.panels?.length).toBeGreaterThan(0);
      }
    }
  });
});
