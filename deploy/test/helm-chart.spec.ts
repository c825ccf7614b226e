import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { INDEXING_CONSUMER_GROUPS } from '@trellis/contracts';
import type { TopicName } from '@trellis/contracts';
import {
  ALL_FEATURES,
  KUBE_VERSIONS,
  SERVICES,
  VALUE_SETS,
  assertToolsInstalled,
  chartDir,
  component,
  helm,
  helmTemplate,
  kubeconform,
  ofKind,
  parseManifests,
  podTemplate,
  render,
  repoRoot,
  specOf,
} from './deploy-tools';
import type { Container, Manifest } from './deploy-tools';
import { ingressAllowed } from './network-policy';
import type { NetworkPolicySpec, Source } from './network-policy';

// Checks of helm/trellis with the tools scripts/install-deploy-tools.sh caches: lint, strict
// offline schema validation (CRDs included) of what it renders, and what a platform team's
// review would look for in the rendered manifests (the chart's other files: helm-chart-files.spec.ts).

const GRPC_SERVICES = ['ingestion', 'graph-store', 'retrieval', 'chat'];

/**
 * The (group, topic) pairs each service subscribes, read from its `topicConsumer({ topic, group })`
 * declarations: a group written out, or the indexing stage's group (INDEXING_CONSUMER_GROUPS).
 */
function declaredConsumers(): Map<string, { group: string; topic: string }[]> {
  const consumers = new Map<string, { group: string; topic: string }[]>();
  for (const service of SERVICES) {
    const handlers = join(repoRoot, 'services', service, 'src/handlers');
    if (!existsSync(handlers)) continue;
    for (const file of readdirSync(handlers).filter((f) => f.endsWith('.consumer.ts'))) {
      const source = readFileSync(join(handlers, file), 'utf8');
      const topic = /\btopic: '([^']+)'/.exec(source)?.[1];
      const group = /\bgroup: '([^']+)'/.exec(source)?.[1] ?? (topic && source.includes(`group: INDEXING_CONSUMER_GROUPS['${topic}']`) ? INDEXING_CONSUMER_GROUPS[topic as TopicName] : undefined);
      if (topic && group) consumers.set(service, [...(consumers.get(service) ?? []), { group, topic }]);
    }
  }
  return consumers;
}

beforeAll(() => {
  assertToolsInstalled();
});

describe('helm lint', () => {
  it.each(['default', ...Object.keys(VALUE_SETS).filter((n) => n !== 'default')])('passes --strict with %s values', (name) => {
    const values = VALUE_SETS[name]?.values ?? [];
    const result = helm(['lint', '--strict', chartDir, ...values.flatMap((v) => ['--values', join(repoRoot, v)])]);
    expect(result.stdout + result.stderr).toContain('0 chart(s) failed');
    expect(result.status).toBe(0);
  });
});

describe('rendered manifests validate strictly against the Kubernetes and CRD schemas', () => {
  const cases = Object.keys(VALUE_SETS).flatMap((name) => KUBE_VERSIONS.map((version) => [name, version] as const));
  it.each(cases)('%s values on Kubernetes %s', (name, kubeVersion) => {
    const yaml = helmTemplate({ ...VALUE_SETS[name], kubeVersion });
    const report = kubeconform(yaml, kubeVersion);
    expect(report.problems).toEqual([]);
    const count = parseManifests(yaml).length;
    expect(report.summary).toEqual({ valid: count, invalid: 0, errors: 0, skipped: 0 });
  });

  it('all features render every optional kind, CRDs included', () => {
    const kinds = new Set(render('all features').map((m) => m.kind));
    for (const kind of ['ServiceMonitor', 'PrometheusRule', 'ScaledObject', 'KafkaTopic', 'GRPCRoute', 'Ingress', 'Secret', 'NetworkPolicy', 'PodDisruptionBudget', 'HorizontalPodAutoscaler']) {
      expect(kinds, kind).toContain(kind);
    }
  });

  it('the schemas are strict: an unknown field is caught in core and custom resources alike', () => {
    const inject = (yaml: string, after: RegExp, line: string) => {
      expect(yaml, String(after)).toMatch(after);
      return yaml.replace(after, `$1\n${line}`);
    };
    let yaml = helmTemplate({ values: [ALL_FEATURES] });
    yaml = inject(yaml, /^( {2}revisionHistoryLimit: 5)$/m, '  revisionHistoy: 5');
    yaml = inject(yaml, /^( {2}minReplicaCount: 1)$/m, '  minReplicas: 1');
    yaml = inject(yaml, /^( {2}topicName: \S*chunk\.extracted)$/m, '  partition: 1');
    const report = kubeconform(yaml, KUBE_VERSIONS[0]);
    expect(report.summary.invalid).toBe(3);
  });
});

describe('workloads', () => {
  it.each(['default', 'all features'])('every Deployment has probes on /healthz and /readyz (%s)', (name) => {
    const deployments = ofKind(render(name), 'Deployment');
    expect(deployments.map(component).sort()).toEqual([...SERVICES].sort());
    for (const deployment of deployments) {
      for (const container of podTemplate(deployment).spec.containers) {
        expect(container.startupProbe?.httpGet, deployment.metadata.name).toEqual({ path: '/healthz', port: 'http' });
        expect(container.livenessProbe?.httpGet, deployment.metadata.name).toEqual({ path: '/healthz', port: 'http' });
        expect(container.readinessProbe?.httpGet, deployment.metadata.name).toEqual({ path: '/readyz', port: 'http' });
        expect(container.ports?.find((p) => p.name === 'http')?.containerPort).toBe(8080);
      }
    }
  });

  it.each(['default', 'all features'])('every workload (Deployments and hook Jobs) has requests, limits and a non-root, read-only, unprivileged securityContext (%s)', (name) => {
    const workloads = render(name).filter((m) => m.kind === 'Deployment' || m.kind === 'Job');
    expect(workloads.length).toBeGreaterThanOrEqual(SERVICES.length + 1);
    for (const workload of workloads) {
      const pod = podTemplate(workload).spec;
      const where = `${workload.kind}/${workload.metadata.name}`;
      expect(pod.securityContext?.runAsNonRoot, where).toBe(true);
      expect(pod.securityContext?.runAsUser, where).toBe(10001);
      expect(pod.securityContext?.seccompProfile?.type, where).toBe('RuntimeDefault');
      expect(pod.automountServiceAccountToken, where).toBe(false);
      expect(pod.volumes?.find((v) => v.name === 'tmp')?.emptyDir, where).toBeDefined();
      const containers: Container[] = [...pod.containers, ...(pod.initContainers ?? [])];
      for (const container of containers) {
        for (const part of ['requests', 'limits'] as const) {
          expect(container.resources?.[part]?.cpu, `${where} ${part}.cpu`).toBeTruthy();
          expect(container.resources?.[part]?.memory, `${where} ${part}.memory`).toBeTruthy();
        }
        const security = container.securityContext;
        expect(security?.runAsNonRoot, where).toBe(true);
        expect(security?.allowPrivilegeEscalation, where).toBe(false);
        expect(security?.readOnlyRootFilesystem, where).toBe(true);
        expect(security?.privileged ?? false, where).toBe(false);
        expect(security?.capabilities?.drop, where).toContain('ALL');
        expect(security?.capabilities?.add ?? [], where).toEqual([]);
        expect(container.volumeMounts?.find((m) => m.name === 'tmp')?.mountPath, where).toBe('/tmp');
      }
    }
  });

  it('spreads each service over zones and nodes with a selector that matches its own pods', () => {
    for (const deployment of ofKind(render('default'), 'Deployment')) {
      const template = podTemplate(deployment);
      const constraints = template.spec.topologySpreadConstraints ?? [];
      expect(constraints.map((c) => c.topologyKey)).toEqual(['topology.kubernetes.io/zone', 'kubernetes.io/hostname']);
      for (const constraint of constraints) {
        for (const [key, value] of Object.entries(constraint.labelSelector?.matchLabels ?? {})) {
          expect(template.metadata.labels[key]).toBe(value);
        }
        expect(constraint.labelSelector?.matchLabels?.['app.kubernetes.io/component']).toBe(component(deployment));
      }
    }
  });

  it('scales every service with an HPA, or a KEDA ScaledObject on consumer lag when enabled, never both', () => {
    const byDefault = render('default');
    expect(ofKind(byDefault, 'HorizontalPodAutoscaler').map(component).sort()).toEqual([...SERVICES].sort());
    const all = render('all features');
    const keda = ofKind(all, 'ScaledObject');
    expect(keda.map(component).sort()).toEqual(['chunking', 'extraction', 'graph-store']);
    const hpas = ofKind(all, 'HorizontalPodAutoscaler').map(component);
    for (const scaled of keda) expect(hpas).not.toContain(component(scaled));
    const triggers = keda.map((k) => specOf<{ triggers: { type: string; metadata: Record<string, string> }[] }>(k).triggers[0]);
    // The consumer groups and topics of the services, behind kafka.topicPrefix ("prod.").
    expect(triggers.map((t) => [t?.type, t?.metadata.consumerGroup, t?.metadata.topic])).toEqual([
      ['kafka', 'prod.chunking', 'prod.document.ingested'],
      ['kafka', 'prod.extraction', 'prod.chunk.ready'],
      ['kafka', 'prod.graph-store', 'prod.chunk.extracted'],
    ]);
    // ...which are the groups and topics the services' code subscribes (and trellis_consumer_lag_messages labels).
    const declared = declaredConsumers();
    for (const scaled of keda) {
      const trigger = specOf<{ triggers: { metadata: Record<string, string> }[] }>(scaled).triggers[0]!.metadata;
      const consumers = declared.get(component(scaled) ?? '') ?? [];
      expect(consumers.map((c) => [`prod.${c.group}`, `prod.${c.topic}`]), component(scaled)).toContainEqual([trigger.consumerGroup, trigger.topic]);
    }
  });

  it('has a PodDisruptionBudget and a Service (gRPC 50051 where served, the HTTP API 8081 on http-api, metrics) per service', () => {
    const manifests = render('default');
    expect(ofKind(manifests, 'PodDisruptionBudget').map(component).sort()).toEqual([...SERVICES].sort());
    for (const service of ofKind(manifests, 'Service')) {
      const ports = specOf<{ ports: { name: string; port: number }[] }>(service).ports;
      const name = component(service) ?? '';
      const expected = GRPC_SERVICES.includes(name) ? [['grpc', 50051], ['metrics', 8080]] : name === 'http-api' ? [['api', 8081], ['metrics', 8080]] : [['metrics', 8080]];
      expect(ports.map((p) => [p.name, p.port])).toEqual(expected);
    }
  });

  it('runs http-api with the API on its own port, calling each gRPC Service of the release', () => {
    const manifests = render('default');
    const deployment = ofKind(manifests, 'Deployment').find((d) => component(d) === 'http-api')!;
    const container = podTemplate(deployment).spec.containers[0]!;
    expect(container.ports?.map((p) => [p.name, p.containerPort])).toEqual([
      ['http', 8080],
      ['api', 8081],
    ]);
    const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      SERVICE: 'http-api',
      TRELLIS_HTTP_API_PORT: '8081',
      TRELLIS_HTTP_API_KNOWLEDGE_BASE_ADDRESS: 'trellis-ingestion.trellis.svc:50051',
      TRELLIS_HTTP_API_GRAPH_ADDRESS: 'trellis-graph-store.trellis.svc:50051',
      TRELLIS_HTTP_API_RETRIEVAL_ADDRESS: 'trellis-retrieval.trellis.svc:50051',
      TRELLIS_HTTP_API_CHAT_ADDRESS: 'trellis-chat.trellis.svc:50051',
    });
    // Each address names a Service of the release that serves gRPC.
    const grpcServices = ofKind(manifests, 'Service').filter((s) => specOf<{ ports: { name: string }[] }>(s).ports.some((p) => p.name === 'grpc'));
    for (const [key, value] of Object.entries(env).filter(([k]) => k.endsWith('_ADDRESS'))) {
      expect(grpcServices.map((s) => `${s.metadata.name}.trellis.svc:50051`), key).toContain(value);
    }
    expect(ofKind(manifests, 'Ingress')).toEqual([]);
    const ingress = ofKind(render('all features'), 'Ingress').find((i) => component(i) === 'http-api')!;
    const rule = specOf<{ rules: { host: string; http: { paths: { path: string; backend: { service: { name: string; port: { name: string } } } }[] } }[] }>(ingress).rules[0]!;
    expect(rule.host).toBe('trellis-api.example.com');
    expect(rule.http.paths.map((p) => [p.path, p.backend.service.name, p.backend.service.port.name])).toEqual([
      ['/api', 'trellis-http-api', 'api'],
      ['/v1', 'trellis-http-api', 'api'],
      ['/mcp', 'trellis-http-api', 'api'],
      ['/', 'trellis-http-api', 'api'],
    ]);
  });

  it('points chat at the retrieval Service and the Jobs at trellis migrate / topics ensure as pre-install hooks', () => {
    const manifests = render('default');
    const config = ofKind(manifests, 'ConfigMap')[0];
    expect(config?.data?.TRELLIS_RETRIEVAL_ADDRESS).toBe('trellis-retrieval.trellis.svc:50051');
    expect(config?.data?.TRELLIS_MODE).toBe('distributed');
    expect(config?.data?.TRELLIS_KAFKA_PARTITIONS).toBe('12');
    const jobs = ofKind(manifests, 'Job');
    expect(jobs.map((j) => podTemplate(j).spec.containers[0]?.args)).toEqual([['migrate'], ['topics', 'ensure']]);
    for (const job of jobs) {
      expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      const env = podTemplate(job).spec.containers[0]?.env ?? [];
      expect(env.find((e) => e.name === 'SERVICE')?.value).toBe('cli');
      expect(env.find((e) => e.name === 'KAFKA_BROKERS')?.value).toBeTruthy();
      expect(env.find((e) => e.name === 'TRELLIS_DB_URL')?.valueFrom?.secretKeyRef).toBeDefined();
    }
    // With Strimzi the topics are KafkaTopic resources (and their dead-letter twins), not a Job.
    const all = render('all features');
    expect(ofKind(all, 'Job').map(component)).toEqual(['migrate']);
    const topics = ofKind(all, 'KafkaTopic').map((t) => specOf<{ topicName: string; partitions: number; replicas: number }>(t));
    expect(topics.map((t) => t.topicName).sort()).toEqual(
      ['document.ingested', 'chunk.ready', 'chunk.extracted'].flatMap((t) => [`prod.${t}`, `prod.${t}.dlq`]).sort(),
    );
    expect(topics.filter((t) => !t.topicName.endsWith('.dlq')).map((t) => [t.partitions, t.replicas])).toEqual(Array(3).fill([24, 3]));
  });
});

describe('secrets', () => {
  const fake = {
    'secrets.devSecret.dbUrl': 'mysql://trellis:FAKE-DB-PASSWORD-7f3a@tidb:4000/trellis',
    'secrets.devSecret.internalToken': 'FAKE-INTERNAL-TOKEN-91bc',
    'secrets.devSecret.openaiApiKey': 'sk-FAKE-OPENAI-KEY-55de',
    'secrets.devSecret.apiKeys': 'FAKE-CLIENT-KEY-0a1b=acme',
  };
  const fakeValues = ['FAKE-DB-PASSWORD-7f3a', 'FAKE-INTERNAL-TOKEN-91bc', 'sk-FAKE-OPENAI-KEY-55de', 'FAKE-CLIENT-KEY-0a1b'];

  it('renders no secret value when existingSecret is used, only references to it', () => {
    const yaml = helmTemplate({
      values: [ALL_FEATURES],
      set: { 'secrets.devSecret.create': 'false' },
      setString: { ...fake, 'secrets.existingSecret': 'platform-trellis', 'secrets.openaiApiKey.existingSecret': 'platform-openai' },
    });
    for (const value of fakeValues) expect(yaml).not.toContain(value);
    const manifests = parseManifests(yaml);
    expect(ofKind(manifests, 'Secret')).toEqual([]);
    const refs = manifests
      .filter((m) => m.kind === 'Deployment' || m.kind === 'Job')
      .flatMap((m) => podTemplate(m).spec.containers.flatMap((c) => c.env ?? []))
      .filter((e) => e.valueFrom?.secretKeyRef)
      .map((e) => [e.name, e.valueFrom?.secretKeyRef?.name, e.valueFrom?.secretKeyRef?.key]);
    expect(new Set(refs.map((r) => r.join(' ')))).toEqual(
      new Set([
        'TRELLIS_DB_URL platform-trellis TRELLIS_DB_URL',
        'TRELLIS_INTERNAL_TOKEN platform-trellis TRELLIS_INTERNAL_TOKEN',
        'OPENAI_API_KEY platform-openai OPENAI_API_KEY',
        'TRELLIS_API_KEYS platform-trellis TRELLIS_API_KEYS',
      ]),
    );
  });

  it('renders the values only into the dev Secret when that is explicitly enabled (the check above can see them)', () => {
    const yaml = helmTemplate({ set: { 'secrets.devSecret.create': 'true' }, setString: fake });
    const secrets = ofKind(parseManifests(yaml), 'Secret');
    expect(secrets).toHaveLength(1);
    expect(secrets[0]?.stringData?.TRELLIS_INTERNAL_TOKEN).toBe('FAKE-INTERNAL-TOKEN-91bc');
    expect(yaml.split('FAKE-INTERNAL-TOKEN-91bc').length - 1).toBe(1);
  });
});

describe('network policy', () => {
  const outsider: Source = { kind: 'pod', namespace: 'apps', namespaceLabels: { 'kubernetes.io/metadata.name': 'apps' }, labels: { app: 'client' } };
  const neighbour: Source = { kind: 'pod', namespace: 'trellis', namespaceLabels: { 'kubernetes.io/metadata.name': 'trellis' }, labels: { app: 'other' } };
  const internet: Source = { kind: 'ip', ip: '203.0.113.7' };
  const prometheus: Source = {
    kind: 'pod',
    namespace: 'monitoring',
    namespaceLabels: { 'kubernetes.io/metadata.name': 'monitoring' },
    labels: { 'app.kubernetes.io/name': 'prometheus' },
  };
  const ingressController: Source = { kind: 'pod', namespace: 'ingress-nginx', namespaceLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' }, labels: { app: 'nginx' } };
  const insider = (manifests: Manifest[]): Source => ({
    kind: 'pod',
    namespace: 'trellis',
    namespaceLabels: { 'kubernetes.io/metadata.name': 'trellis' },
    labels: podTemplate(ofKind(manifests, 'Deployment')[0] as Manifest).metadata.labels,
  });

  /** For each service, the ports `source` may reach. */
  function reachable(manifests: Manifest[], source: Source): Record<string, string[]> {
    const policies = ofKind(manifests, 'NetworkPolicy');
    const out: Record<string, string[]> = {};
    for (const deployment of ofKind(manifests, 'Deployment')) {
      const template = podTemplate(deployment);
      const ports = template.spec.containers.flatMap((c) => c.ports ?? []);
      out[component(deployment) ?? ''] = ports
        .filter((p) => ingressAllowed(policies, 'trellis', template.metadata.labels, { name: p.name ?? '', number: p.containerPort }, source))
        .map((p) => p.name ?? String(p.containerPort));
    }
    return out;
  }

  const only = (open: Record<string, string[]>) => Object.fromEntries(SERVICES.map((s) => [s, open[s] ?? []]));

  it('admits gRPC from outside the release to retrieval and chat only, the HTTP API port of http-api, and nothing else from outside', () => {
    const manifests = render('default');
    for (const source of [outsider, neighbour, internet]) {
      expect(reachable(manifests, source)).toEqual(only({ retrieval: ['grpc'], chat: ['grpc'], 'http-api': ['api'] }));
    }
  });

  it('admits the metrics port to Prometheus only, and everything inside the release', () => {
    const manifests = render('default');
    expect(reachable(manifests, prometheus)).toEqual(
      only({ ingestion: ['http'], chunking: ['http'], extraction: ['http'], 'graph-store': ['http'], retrieval: ['grpc', 'http'], chat: ['grpc', 'http'], 'http-api': ['http', 'api'] }),
    );
    expect(reachable(manifests, insider(manifests))).toEqual(
      only({ ingestion: ['grpc', 'http'], chunking: ['http'], extraction: ['http'], 'graph-store': ['grpc', 'http'], retrieval: ['grpc', 'http'], chat: ['grpc', 'http'], 'http-api': ['http', 'api'] }),
    );
  });

  it('narrows external gRPC to networkPolicy.externalFrom when set', () => {
    const manifests = render('all features');
    expect(reachable(manifests, ingressController)).toEqual(only({ retrieval: ['grpc'], chat: ['grpc'], 'http-api': ['api'] }));
    for (const source of [outsider, neighbour, internet]) expect(reachable(manifests, source)).toEqual(only({}));
  });

  it('limits egress to the release, DNS, TiDB, Kafka, the LLM endpoint and the OTLP collector, each on its ports', () => {
    for (const name of ['default', 'all features']) {
      const policies = ofKind(render(name), 'NetworkPolicy').map((p) => p.spec as NetworkPolicySpec);
      const egressPolicies = policies.filter((p) => (p.policyTypes ?? []).includes('Egress'));
      expect(egressPolicies).toHaveLength(1);
      const rules = egressPolicies[0]?.egress ?? [];
      const [intraRelease, ...rest] = rules;
      expect(intraRelease?.ports).toBeUndefined();
      expect(intraRelease?.to?.map((peer) => Object.keys(peer))).toEqual([['podSelector']]);
      for (const rule of rest) expect(rule.ports?.length, JSON.stringify(rule)).toBeGreaterThan(0);
      expect(rest[0]?.ports).toEqual([
        { port: 53, protocol: 'TCP' },
        { port: 53, protocol: 'UDP' },
      ]);
    }
  });
});
