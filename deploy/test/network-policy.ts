import type { Manifest } from './deploy-tools';

/**
 * Just enough of the NetworkPolicy semantics to answer "may this source reach this pod on
 * this port": policies select pods by label; a pod selected by no ingress policy is open;
 * otherwise a connection passes when some rule of some selecting policy admits both the
 * source (a peer matches, or the rule has no `from`) and the port (or the rule has no ports).
 */

interface LabelSelector {
  readonly matchLabels?: Record<string, string>;
  readonly matchExpressions?: readonly { readonly key: string; readonly operator: string; readonly values?: readonly string[] }[];
}

interface Peer {
  readonly podSelector?: LabelSelector;
  readonly namespaceSelector?: LabelSelector;
  readonly ipBlock?: { readonly cidr: string; readonly except?: readonly string[] };
}

interface PolicyPort {
  readonly port?: string | number;
  readonly protocol?: string;
}

interface IngressRule {
  readonly from?: readonly Peer[];
  readonly ports?: readonly PolicyPort[];
}

export interface NetworkPolicySpec {
  readonly podSelector: LabelSelector;
  readonly policyTypes?: readonly string[];
  readonly ingress?: readonly IngressRule[];
  readonly egress?: readonly { readonly to?: readonly Peer[]; readonly ports?: readonly PolicyPort[] }[];
}

/** Where a connection comes from: a pod (namespace + labels) or an address outside the cluster. */
export type Source =
  | { readonly kind: 'pod'; readonly namespace: string; readonly namespaceLabels: Record<string, string>; readonly labels: Record<string, string> }
  | { readonly kind: 'ip'; readonly ip: string };

export interface TargetPort {
  readonly name: string;
  readonly number: number;
}

export function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expression of selector.matchExpressions ?? []) {
    const value = labels[expression.key];
    switch (expression.operator) {
      case 'In':
        if (value === undefined || !(expression.values ?? []).includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && (expression.values ?? []).includes(value)) return false;
        break;
      case 'Exists':
        if (value === undefined) return false;
        break;
      case 'DoesNotExist':
        if (value !== undefined) return false;
        break;
      default:
        throw new Error(`unknown selector operator ${expression.operator}`);
    }
  }
  return true;
}

function ipToNumber(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function inCidr(ip: string, cidr: string): boolean {
  const [base = '', bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const start = Math.floor(ipToNumber(base) / size) * size;
  const value = ipToNumber(ip);
  return value >= start && value < start + size;
}

function peerMatches(peer: Peer, source: Source, policyNamespace: string): boolean {
  if (peer.ipBlock) {
    if (source.kind !== 'ip') return false;
    return inCidr(source.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((cidr) => inCidr(source.ip, cidr));
  }
  if (source.kind !== 'pod') return false;
  const namespaceOk = peer.namespaceSelector ? selectorMatches(peer.namespaceSelector, source.namespaceLabels) : source.namespace === policyNamespace;
  const podOk = peer.podSelector ? selectorMatches(peer.podSelector, source.labels) : true;
  return namespaceOk && podOk;
}

function portMatches(ports: readonly PolicyPort[] | undefined, port: TargetPort): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some((p) => (p.protocol ?? 'TCP') === 'TCP' && (p.port === undefined || p.port === port.name || p.port === port.number));
}

/** Whether `source` may open a TCP connection to `port` of a pod with `podLabels` in `namespace`. */
export function ingressAllowed(policies: readonly Manifest[], namespace: string, podLabels: Record<string, string>, port: TargetPort, source: Source): boolean {
  const selecting = policies
    .filter((p) => p.kind === 'NetworkPolicy' && (p.metadata.namespace ?? namespace) === namespace)
    .map((p) => p.spec as NetworkPolicySpec)
    .filter((spec) => selectorMatches(spec.podSelector, podLabels))
    .filter((spec) => (spec.policyTypes ?? ['Ingress']).includes('Ingress'));
  if (selecting.length === 0) return true;
  return selecting.some((spec) =>
    (spec.ingress ?? []).some(
      (rule) => portMatches(rule.ports, port) && (!rule.from || rule.from.length === 0 || rule.from.some((peer) => peerMatches(peer, source, namespace))),
    ),
  );
}
