import { isIP } from 'node:net';
import type { EnvReader } from './env-reader';
import type { RuntimeMode } from './runtime-mode';

/** Who may call Trellis, and what Trellis itself may reach. */
export interface AccessSettings {
  /** TRELLIS_API_KEYS: "key=tenant,key2=tenant2". Empty: no authentication, one default tenant. */
  readonly apiKeys: ReadonlyMap<string, string>;
  /** TRELLIS_INTERNAL_TOKEN: shared secret services use to call each other for a tenant. */
  readonly internalToken?: string;
  /** TRELLIS_METRICS_TOKEN: when set, /metrics answers only `Authorization: Bearer <token>`. */
  readonly metricsToken?: string;
  /**
   * TRELLIS_METRICS_NAMES: `true` labels metrics with tenant ids and knowledge-base names; by
   * default (`false`) they are opaque digests, so a scrape tells nobody who the tenants are.
   */
  readonly metricsNames: boolean;
  /**
   * TRELLIS_URL_FETCH_ALLOW: comma-separated CIDRs, IP addresses and host names that URL
   * fetching may reach although they are loopback, private, link-local or otherwise internal
   * (intranet deployments). Empty by default: only public addresses are fetched.
   */
  readonly urlFetchAllow: readonly string[];
}

/** Shortest TRELLIS_INTERNAL_TOKEN accepted: it is a bearer secret for every tenant. */
const MIN_INTERNAL_TOKEN_CHARS = 16;

export function readAccessSettings(env: EnvReader, mode: RuntimeMode): AccessSettings {
  const apiKeys = new Map<string, string>();
  for (const entry of (env.text('TRELLIS_API_KEYS') ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const [key, tenant] = entry.split('=').map((p) => p.trim());
    if (!key || !tenant || !/^[A-Za-z0-9._-]{1,64}$/.test(tenant)) env.problems.push('TRELLIS_API_KEYS entries must look like key=tenant');
    else apiKeys.set(key, tenant);
  }
  const internalToken = env.text('TRELLIS_INTERNAL_TOKEN');
  if (internalToken !== undefined && internalToken.length < MIN_INTERNAL_TOKEN_CHARS) {
    env.problems.push(
      `TRELLIS_INTERNAL_TOKEN must be at least ${MIN_INTERNAL_TOKEN_CHARS} characters: it lets a caller act as any tenant (generate one with \`openssl rand -hex 32\`)`,
    );
  }
  if (mode === 'distributed' && apiKeys.size > 0 && internalToken === undefined) {
    env.problems.push(
      'TRELLIS_API_KEYS is set but TRELLIS_INTERNAL_TOKEN is not: the services of a distributed deployment act for a tenant with it (chat calls retrieval), so without it every chat fails; set the same long random secret on every service (`openssl rand -hex 32`)',
    );
  }
  return {
    apiKeys,
    internalToken,
    metricsToken: env.text('TRELLIS_METRICS_TOKEN'),
    metricsNames: env.flag('TRELLIS_METRICS_NAMES', false),
    urlFetchAllow: urlFetchAllowList(env),
  };
}

/** CIDRs (`10.0.0.0/8`, `fd00::/8`), single addresses and host names, each checked. */
function urlFetchAllowList(env: EnvReader): string[] {
  const entries = (env.text('TRELLIS_URL_FETCH_ALLOW') ?? '').split(',').map((e) => e.trim().toLowerCase()).filter((e) => e !== '');
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const validPrefix = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    const hostName = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?$/.test(entry);
    if (!((family !== 0 && validPrefix && extra === undefined) || hostName)) {
      env.problems.push(`TRELLIS_URL_FETCH_ALLOW entry "${entry}" is not a CIDR, an IP address or a host name`);
    }
  }
  return entries;
}
