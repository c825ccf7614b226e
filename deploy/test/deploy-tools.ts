import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The tools scripts/install-deploy-tools.sh caches (helm, kubeconform, offline schemas) and
 * small wrappers over them for the deploy checks.
 */
export const repoRoot = resolve(__dirname, '../..');
export const chartDir = join(repoRoot, 'helm/trellis');
export const cacheDir = process.env.TRELLIS_CACHE_DIR ?? join(homedir(), '.cache/trellis');

const helmBin = join(cacheDir, 'bin/helm');
const kubeconformBin = join(cacheDir, 'bin/kubeconform');
const python = join(cacheDir, 'venv-k8s-schemas/bin/python');
const schemas = join(cacheDir, 'k8s-schemas');

/** The chart's services, in the order the chart and skaffold list them. */
export const SERVICES = ['ingestion', 'chunking', 'extraction', 'graph-store', 'retrieval', 'chat', 'http-api'] as const;
/** Values that turn every optional feature of the chart on. */
export const ALL_FEATURES = 'helm/trellis/ci/values-all-features.yaml';

/** The Kubernetes versions the chart is validated against: its floor and the newest schemas. */
export const KUBE_VERSIONS = ['1.27.0', '1.37.0'] as const;

export function assertToolsInstalled(): void {
  const missing = [helmBin, kubeconformBin, python, join(schemas, 'crds')].filter((p) => !existsSync(p));
  if (missing.length > 0) {
    throw new Error(`deploy tools missing (${missing.join(', ')}): run bash scripts/install-deploy-tools.sh first`);
  }
}

export interface HelmResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function helm(args: readonly string[]): HelmResult {
  const result = spawnSync(helmBin, args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

export interface TemplateOptions {
  /** Values files, relative to the repository root. */
  readonly values?: readonly string[];
  /** `--set` (typed: numbers stay numbers). */
  readonly set?: Record<string, string>;
  /** `--set-string` (taken literally: commas, colons and @ are safe). */
  readonly setString?: Record<string, string>;
  readonly kubeVersion?: string;
}

export function templateArgs(options: TemplateOptions = {}): string[] {
  const args = ['template', 'trellis', chartDir, '--namespace', 'trellis', '--kube-version', options.kubeVersion ?? KUBE_VERSIONS[0]];
  for (const file of options.values ?? []) args.push('--values', join(repoRoot, file));
  for (const [key, value] of Object.entries(options.set ?? {})) args.push('--set', `${key}=${value}`);
  for (const [key, value] of Object.entries(options.setString ?? {})) args.push('--set-string', `${key}=${value}`);
  return args;
}

/** `helm template` of the chart; throws with helm's message when rendering fails. */
export function helmTemplate(options: TemplateOptions = {}): string {
  const args = templateArgs(options);
  const result = helm(args);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  return result.stdout;
}

export interface KubeconformSummary {
  readonly valid: number;
  readonly invalid: number;
  readonly errors: number;
  readonly skipped: number;
}

export interface KubeconformReport {
  readonly summary: KubeconformSummary;
  readonly problems: readonly string[];
}

/**
 * Validates manifests strictly and offline: Kubernetes schemas from kubernetes-validate, CRD
 * schemas converted from the operators' CRDs, and the Strimzi schema kept in deploy/test.
 */
export function kubeconform(manifests: string, kubeVersion: string): KubeconformReport {
  const result = spawnSync(
    kubeconformBin,
    [
      '-strict',
      '-summary',
      '-output', 'json',
      '-kubernetes-version', kubeVersion,
      '-schema-location', `${schemas}/kubernetes/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
      '-schema-location', `${schemas}/crds/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json`,
      '-schema-location', `${repoRoot}/deploy/test/schemas/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json`,
      '-',
    ],
    { input: manifests, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const report = JSON.parse(result.stdout) as {
    resources?: { kind: string; name: string; status: string; msg: string }[];
    summary: KubeconformSummary;
  };
  return {
    summary: report.summary,
    problems: (report.resources ?? []).filter((r) => r.status !== 'statusValid').map((r) => `${r.kind}/${r.name}: ${r.status} ${r.msg}`),
  };
}

/** The parts of rendered Kubernetes objects the checks read. */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: ObjectMeta;
  readonly spec?: unknown;
  readonly data?: Record<string, string>;
  readonly stringData?: Record<string, string>;
}

export interface Probe {
  readonly httpGet?: { readonly path: string; readonly port: string | number };
}

export interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: { readonly secretKeyRef?: { readonly name: string; readonly key: string; readonly optional?: boolean } };
}

export interface Container {
  readonly name: string;
  readonly image: string;
  readonly args?: readonly string[];
  readonly ports?: readonly { readonly name?: string; readonly containerPort: number }[];
  readonly env?: readonly EnvVar[];
  readonly livenessProbe?: Probe;
  readonly readinessProbe?: Probe;
  readonly startupProbe?: Probe;
  readonly resources?: { readonly requests?: Record<string, string>; readonly limits?: Record<string, string> };
  readonly securityContext?: {
    readonly runAsNonRoot?: boolean;
    readonly runAsUser?: number;
    readonly allowPrivilegeEscalation?: boolean;
    readonly readOnlyRootFilesystem?: boolean;
    readonly privileged?: boolean;
    readonly capabilities?: { readonly drop?: readonly string[]; readonly add?: readonly string[] };
  };
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string }[];
}

export interface PodSpec {
  readonly containers: readonly Container[];
  readonly initContainers?: readonly Container[];
  readonly automountServiceAccountToken?: boolean;
  readonly securityContext?: { readonly runAsNonRoot?: boolean; readonly runAsUser?: number; readonly seccompProfile?: { readonly type: string } };
  readonly topologySpreadConstraints?: readonly { readonly topologyKey: string; readonly labelSelector?: { readonly matchLabels?: Record<string, string> } }[];
  readonly volumes?: readonly { readonly name: string; readonly emptyDir?: Record<string, unknown> }[];
}

export interface PodTemplate {
  readonly metadata: { readonly labels: Record<string, string>; readonly annotations?: Record<string, string> };
  readonly spec: PodSpec;
}

/** Deployments and Jobs: their pod templates. */
export function podTemplate(manifest: Manifest): PodTemplate {
  return (manifest.spec as { template: PodTemplate }).template;
}

export function specOf<T>(manifest: Manifest): T {
  return manifest.spec as T;
}

/** Parses a multi-document YAML stream (with the PyYAML of the tools' venv). */
export function parseManifests(yaml: string): Manifest[] {
  const out = execFileSync(python, ['-c', 'import json, sys, yaml\njson.dump([d for d in yaml.safe_load_all(sys.stdin) if d], sys.stdout)'], {
    input: yaml,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out) as Manifest[];
}

/** Parses one YAML file (skaffold.yaml). */
export function parseYamlFile(path: string): unknown {
  const out = execFileSync(python, ['-c', 'import json, sys, yaml\njson.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)', path], { encoding: 'utf8' });
  return JSON.parse(out);
}

export const ofKind = (manifests: readonly Manifest[], kind: string) => manifests.filter((m) => m.kind === kind);
export const component = (m: Manifest) => m.metadata.labels?.['app.kubernetes.io/component'];

const EXAMPLES = readdirSync(join(chartDir, 'examples'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => `helm/trellis/examples/${f}`);

/** Every values combination the chart ships or documents. */
export const VALUE_SETS: Record<string, TemplateOptions> = {
  default: {},
  'all features': { values: [ALL_FEATURES] },
  ...Object.fromEntries(EXAMPLES.map((file) => [file.replace('helm/trellis/examples/', ''), { values: [file] }])),
};

const rendered = new Map<string, Manifest[]>();
/** The manifests of one of VALUE_SETS, rendered once per test file. */
export function render(name: string): Manifest[] {
  let manifests = rendered.get(name);
  if (!manifests) {
    const options = VALUE_SETS[name];
    if (!options) throw new Error(`no value set ${name}`);
    manifests = parseManifests(helmTemplate(options));
    rendered.set(name, manifests);
  }
  return manifests;
}
