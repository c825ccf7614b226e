import { isIP } from 'node:net';
import { availableParallelism, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { httpApiSettings } from './http-api-settings';
import type { HttpApiSettings } from './http-api-settings';

/** How indexing events travel and where data lives. */
export type RuntimeMode = 'standalone' | 'distributed';

export interface OpenAiSettings {
  /** OPENAI_BASE_URL: any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM, ...). */
  readonly baseUrl?: string;
  /** OPENAI_API_KEY. Never logged. */
  readonly apiKey?: string;
  /** TRELLIS_LLM_MODEL: chat and extraction model. */
  readonly chatModel: string;
  /** TRELLIS_LLM_TIMEOUT_MS: per-request timeout. */
  readonly timeoutMs: number;
  /** TRELLIS_LLM_MAX_RETRIES: retries of a request on 429, 5xx and timeouts, honouring Retry-After. Default 3. */
  readonly maxRetries: number;
  /** TRELLIS_LLM_MAX_CONCURRENCY: chat calls in flight per model across the whole deployment; 0 = unlimited. */
  readonly maxConcurrency: number;
  /** TRELLIS_LLM_REQUESTS_PER_MINUTE: chat calls started per minute per model, deployment-wide; 0 = unlimited. */
  readonly requestsPerMinute: number;
  /** TRELLIS_LLM_TOKENS_PER_MINUTE: chat tokens (input + output) per minute per model, deployment-wide; 0 = unlimited. */
  readonly tokensPerMinute: number;
}

/**
 * Where embeddings come from, chosen independently of the LLM: a local model with a remote
 * LLM, or an embedding endpoint with the local extractor, are both fine.
 */
export interface EmbeddingSettings {
  /**
   * TRELLIS_EMBEDDINGS: `local` (a sentence-embedding model run in process, the default),
   * `openai` (an OpenAI-compatible /embeddings endpoint) or `hash` (hashed word features: no
   * model, no meaning). When unset, `local`, falling back to `hash` with a warning when the
   * model cannot be found or downloaded; when set to `local`, a missing model fails start-up.
   */
  readonly provider: 'local' | 'openai' | 'hash';
  /** True when TRELLIS_EMBEDDINGS was set explicitly (no silent fall-back). */
  readonly explicit: boolean;
  /**
   * TRELLIS_EMBEDDING_MODEL: for `local` a model name or hub repository (default
   * all-MiniLM-L6-v2); for `openai` the endpoint's model (default text-embedding-3-small).
   */
  readonly model: string;
  /** TRELLIS_EMBEDDING_DIMENSIONS: vector size; for `local` a check against the model (0: take the model's). */
  readonly dimensions: number;
  /** TRELLIS_EMBEDDING_MODEL_DIR: a sentence-transformers directory (onnx/model.onnx or model.safetensors, tokenizer.json, config.json). */
  readonly modelDir?: string;
  /** TRELLIS_MODEL_CACHE_DIR: where models are downloaded and converted. Default ~/.cache/trellis/models. */
  readonly cacheDir: string;
  /** TRELLIS_MODEL_DOWNLOAD: `true` (default) downloads a missing local model once from TRELLIS_MODEL_HUB_URL. */
  readonly download: boolean;
  /** TRELLIS_MODEL_HUB_URL: a Hugging Face-compatible hub. Default https://huggingface.co. */
  readonly hubUrl: string;
  /**
   * TRELLIS_EMBEDDING_QUANTIZE: `true` (default) converts safetensors weights to int8 (dynamic
   * quantization): on hotpotqa-100 vector R@5 79.5 against 78.5 in float, 2.6× faster.
   * A supplied onnx/model.onnx is used as it is.
   */
  readonly quantize: boolean;
  /** TRELLIS_EMBEDDING_THREADS: ONNX Runtime threads of the local model. Default: the machine's cores, at most 4. */
  readonly threads: number;
  /** TRELLIS_EMBEDDING_BASE_URL / TRELLIS_EMBEDDING_API_KEY: the `openai` endpoint; default OPENAI_BASE_URL / OPENAI_API_KEY. */
  readonly baseUrl?: string;
  readonly apiKey?: string;
}

/** Server defaults of the per-knowledge-base entity resolution settings. */
export interface ResolutionDefaults {
  /**
   * TRELLIS_RESOLUTION_MODE: `name` (same normalised name, same entity), `embedding` (same
   * name and description embeddings within the threshold) or `auto` (default): `embedding`
   * when an LLM extracts, `name` with the local extractor, whose template descriptions and
   * hash embeddings are too crude to tell same-name entities apart.
   */
  readonly mode: 'auto' | 'name' | 'embedding';
  /** TRELLIS_RESOLUTION_THRESHOLD: cosine similarity at or above which a mention joins a same-name entity. Default 0.6. */
  readonly similarityThreshold: number;
  /** TRELLIS_RESOLUTION_LLM_MERGE: `true` asks the LLM about same-name entities in the close band. Default false. */
  readonly llmMergeDecisions: boolean;
  /** TRELLIS_RESOLUTION_LLM_MERGE_FLOOR: lower end of that band. Default 0.4. */
  readonly llmMergeFloor: number;
  /** TRELLIS_SUMMARY_MAX_CHARS: summaries longer than this are summarised by the LLM (truncated without one). Default 2000. */
  readonly summaryMaxChars: number;
}

export interface TrellisConfig {
  readonly mode: RuntimeMode;
  /** Service name used in logs and metrics. */
  readonly serviceName: string;
  /** TRELLIS_DATA_DIR: where standalone keeps its SQLite file. Default ./.trellis. */
  readonly dataDir: string;
  /** TRELLIS_GRPC_HOST / TRELLIS_GRPC_PORT. Default 127.0.0.1:50051. */
  readonly grpcHost: string;
  readonly grpcPort: number;
  /** TRELLIS_HTTP_HOST / TRELLIS_HTTP_PORT: /healthz, /readyz and /metrics. Default 127.0.0.1:8080; port 0 picks a free one. */
  readonly httpHost: string;
  readonly httpPort: number;
  /** TRELLIS_METRICS_TOKEN: when set, /metrics answers only `Authorization: Bearer <token>`. */
  readonly metricsToken?: string;
  /**
   * TRELLIS_METRICS_NAMES: `true` labels metrics with tenant ids and knowledge-base names; by
   * default (`false`) they are opaque digests, so a scrape tells nobody who the tenants are.
   */
  readonly metricsNames: boolean;
  /** TRELLIS_MAX_UPLOAD_BYTES: largest accepted document. Default 50 MB. */
  readonly maxUploadBytes: number;
  /** TRELLIS_PARSE_TIMEOUT_MS: time one HTML, PDF or DOCX document may take to parse before it fails. Default 60000. */
  readonly parseTimeoutMs: number;
  /** TRELLIS_MAX_DECOMPRESSED_BYTES: what a DOCX's entries may inflate to, together. Default 200 MB. */
  readonly maxDecompressedBytes: number;
  /**
   * Load shedding of each gRPC server (health and reflection are never shed).
   * TRELLIS_MAX_CONCURRENT_REQUESTS: calls, unary or streaming, running at once; 0 turns
   * shedding off. Default 16 (query work is CPU on the main thread: more in flight on two
   * cores only lengthens every call). TRELLIS_MAX_QUEUED_REQUESTS: calls waiting for a slot,
   * taken in turn per tenant. Default 32. TRELLIS_MAX_QUEUE_WAIT_MS: longest wait before
   * RESOURCE_EXHAUSTED. Default 50, so a refused call learns it within 100 ms.
   * TRELLIS_MAX_EVENT_LOOP_DELAY_MS: new calls are refused while the event loop is further
   * behind than this (synchronous query work piling up); 0 turns this check off. Default 100.
   */
  readonly admission: { readonly maxConcurrent: number; readonly maxQueued: number; readonly maxQueueWaitMs: number; readonly maxEventLoopDelayMs: number };
  /** TRELLIS_LOG_LEVEL: fatal, error, warn, info, debug, trace or silent. */
  readonly logLevel: string;
  /** TRELLIS_DB_URL: mysql://user:pass@host:port/db for TiDB; unset in standalone (SQLite). */
  readonly dbUrl?: string;
  /** KAFKA_BROKERS: comma-separated host:port list; unset in standalone (in-process bus). */
  readonly kafkaBrokers: readonly string[];
  readonly kafka: {
    /** TRELLIS_KAFKA_TOPIC_PREFIX: prepended to topic and group names (several deployments, one cluster). */
    readonly topicPrefix: string;
    /** TRELLIS_KAFKA_PARTITIONS: partitions of the topics `trellis topics ensure` creates. Default 6. */
    readonly partitions: number;
    /** TRELLIS_KAFKA_REPLICATION_FACTOR: replicas of those topics. Default 1. */
    readonly replicationFactor: number;
    /** TRELLIS_KAFKA_CONCURRENCY: partitions one consumer handles at once. Default 2. */
    readonly concurrency: number;
    /** TRELLIS_KAFKA_SESSION_TIMEOUT_MS: how soon a dead consumer's partitions move to another. Default 30000. */
    readonly sessionTimeoutMs: number;
  };
  /** TRELLIS_DB_POOL_SIZE: connections per process to TiDB. Default 10. */
  readonly dbPoolSize: number;
  /** OpenAI-compatible provider of chat and extraction; `enabled` is false when neither key nor base URL is set. */
  readonly openai: OpenAiSettings & { readonly enabled: boolean };
  readonly embeddings: EmbeddingSettings;
  /** TRELLIS_URL_FETCH_TIMEOUT_MS: total time for adding a document by URL, redirects and body included. Default 30000. */
  readonly urlFetchTimeoutMs: number;
  /** TRELLIS_URL_FETCH_MAX_REDIRECTS: redirects followed when adding a document by URL. Default 5. */
  readonly urlFetchMaxRedirects: number;
  /**
   * TRELLIS_URL_FETCH_ALLOW: comma-separated CIDRs, IP addresses and host names that URL
   * fetching may reach although they are loopback, private, link-local or otherwise internal
   * (intranet deployments). Empty by default: only public addresses are fetched.
   */
  readonly urlFetchAllow: readonly string[];
  /** TRELLIS_API_KEYS: "key=tenant,key2=tenant2". Empty: no authentication, one default tenant. */
  readonly apiKeys: ReadonlyMap<string, string>;
  /** TRELLIS_INTERNAL_TOKEN: shared secret services use to call each other for a tenant. */
  readonly internalToken?: string;
  /** TRELLIS_RETRIEVAL_ADDRESS: host:port of the retrieval service, for chat in distributed mode. */
  readonly retrievalAddress: string;
  /**
   * TRELLIS_RERANKER: `none` (default), `local` (lexical overlap, no model) or `http` (a
   * `/rerank` endpoint as served by Cohere, Jina, TEI or vLLM at TRELLIS_RERANKER_URL, with
   * TRELLIS_RERANKER_MODEL and TRELLIS_RERANKER_API_KEY). Applied to oversampled candidates.
   */
  readonly reranker: { readonly kind: 'none' | 'local' | 'http'; readonly url?: string; readonly model: string; readonly apiKey?: string };
  readonly resolution: ResolutionDefaults;
  readonly sweeper: SweeperSettings;
  readonly httpApi: HttpApiSettings;
}

/**
 * The sweeper re-drives indexing work whose event was lost (a write committed, its event never
 * reached the broker or a crash fell between them): documents still `pending` and chunks still
 * `embedded` or `extracted` after `stuckAfterMs` get their event again.
 */
export interface SweeperSettings {
  /** TRELLIS_SWEEP_INTERVAL_MS: how often to look for stuck work; 0 turns the sweeper off. */
  readonly intervalMs: number;
  /** TRELLIS_STUCK_AFTER_MS: how long work may sit in one status before it counts as stuck. */
  readonly stuckAfterMs: number;
  /** TRELLIS_MAX_REDRIVES: re-drives of one document version before it fails with an error. */
  readonly maxRedrives: number;
}

/** Shortest TRELLIS_INTERNAL_TOKEN accepted: it is a bearer secret for every tenant. */
const MIN_INTERNAL_TOKEN_CHARS = 16;

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Builds the configuration from environment variables, once, at start-up. Every problem
 * is collected so a bad deployment fails listing all of them, not the first.
 */
export function loadConfig(env: Env, serviceName: string): TrellisConfig {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const fraction = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0 || value > 1) {
      problems.push(`${name} must be a number in (0, 1] (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const text = (name: string): string | undefined => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === '' ? undefined : raw;
  };

  const kafkaBrokers = (text('KAFKA_BROKERS') ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  for (const broker of kafkaBrokers) {
    if (!/^[^:\s]+:\d{1,5}$/.test(broker)) problems.push(`KAFKA_BROKERS entry "${broker}" is not host:port`);
  }
  const dbUrl = text('TRELLIS_DB_URL');
  if (dbUrl !== undefined && !/^mysql:\/\//.test(dbUrl)) {
    problems.push('TRELLIS_DB_URL must start with mysql:// (TiDB or another MySQL-protocol server)');
  }
  const requested = text('TRELLIS_MODE');
  if (requested !== undefined && requested !== 'standalone' && requested !== 'distributed') {
    problems.push(`TRELLIS_MODE must be "standalone" or "distributed" (got "${requested}")`);
  }
  const mode: RuntimeMode = (requested as RuntimeMode | undefined) ?? (kafkaBrokers.length > 0 ? 'distributed' : 'standalone');
  if (mode === 'distributed') {
    if (kafkaBrokers.length === 0) problems.push('KAFKA_BROKERS is required in distributed mode');
    if (dbUrl === undefined) problems.push('TRELLIS_DB_URL is required in distributed mode');
  }
  const logLevel = text('TRELLIS_LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`TRELLIS_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const baseUrl = text('OPENAI_BASE_URL');
  if (baseUrl !== undefined && !/^https?:\/\//.test(baseUrl)) problems.push('OPENAI_BASE_URL must be an http(s) URL');
  const apiKey = text('OPENAI_API_KEY');

  const apiKeys = new Map<string, string>();
  for (const entry of (text('TRELLIS_API_KEYS') ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const [key, tenant] = entry.split('=').map((p) => p.trim());
    if (!key || !tenant || !/^[A-Za-z0-9._-]{1,64}$/.test(tenant)) problems.push('TRELLIS_API_KEYS entries must look like key=tenant');
    else apiKeys.set(key, tenant);
  }
  const metricsNames = text('TRELLIS_METRICS_NAMES') ?? 'false';
  if (!['true', 'false'].includes(metricsNames)) problems.push('TRELLIS_METRICS_NAMES must be true or false');
  const internalToken = text('TRELLIS_INTERNAL_TOKEN');
  if (internalToken !== undefined && internalToken.length < MIN_INTERNAL_TOKEN_CHARS) {
    problems.push(`TRELLIS_INTERNAL_TOKEN must be at least ${MIN_INTERNAL_TOKEN_CHARS} characters: it lets a caller act as any tenant (generate one with \`openssl rand -hex 32\`)`);
  }
  if (mode === 'distributed' && apiKeys.size > 0 && internalToken === undefined) {
    problems.push(
      'TRELLIS_API_KEYS is set but TRELLIS_INTERNAL_TOKEN is not: the services of a distributed deployment act for a tenant with it (chat calls retrieval), so without it every chat fails; set the same long random secret on every service (`openssl rand -hex 32`)',
    );
  }

  const rerankerKind = text('TRELLIS_RERANKER') ?? 'none';
  if (!['none', 'local', 'http'].includes(rerankerKind)) problems.push('TRELLIS_RERANKER must be none, local or http');
  const rerankerUrl = text('TRELLIS_RERANKER_URL');
  if (rerankerKind === 'http' && (rerankerUrl === undefined || !/^https?:\/\//.test(rerankerUrl))) {
    problems.push('TRELLIS_RERANKER_URL must be an http(s) URL when TRELLIS_RERANKER=http');
  }

  const resolutionMode = text('TRELLIS_RESOLUTION_MODE') ?? 'auto';
  if (!['auto', 'name', 'embedding'].includes(resolutionMode)) problems.push('TRELLIS_RESOLUTION_MODE must be auto, name or embedding');
  const llmMerge = text('TRELLIS_RESOLUTION_LLM_MERGE') ?? 'false';
  if (!['true', 'false'].includes(llmMerge)) problems.push('TRELLIS_RESOLUTION_LLM_MERGE must be true or false');
  const resolution: ResolutionDefaults = {
    mode: resolutionMode as ResolutionDefaults['mode'],
    similarityThreshold: fraction('TRELLIS_RESOLUTION_THRESHOLD', 0.6),
    llmMergeDecisions: llmMerge === 'true',
    llmMergeFloor: fraction('TRELLIS_RESOLUTION_LLM_MERGE_FLOOR', 0.4),
    summaryMaxChars: int('TRELLIS_SUMMARY_MAX_CHARS', 2000, 200, 100_000),
  };
  if (resolution.llmMergeFloor > resolution.similarityThreshold) {
    problems.push('TRELLIS_RESOLUTION_LLM_MERGE_FLOOR must not exceed TRELLIS_RESOLUTION_THRESHOLD');
  }

  const embeddings = embeddingSettings(env, text, int, baseUrl, apiKey, problems);

  const config: TrellisConfig = {
    mode,
    serviceName,
    dataDir: resolve(text('TRELLIS_DATA_DIR') ?? '.trellis'),
    grpcHost: text('TRELLIS_GRPC_HOST') ?? '127.0.0.1',
    grpcPort: int('TRELLIS_GRPC_PORT', 50051, 0, 65535),
    httpHost: text('TRELLIS_HTTP_HOST') ?? text('TRELLIS_GRPC_HOST') ?? '127.0.0.1',
    httpPort: int('TRELLIS_HTTP_PORT', 8080, 0, 65535),
    maxUploadBytes: int('TRELLIS_MAX_UPLOAD_BYTES', 50 * 1024 * 1024, 1, 2 ** 31 - 1),
    parseTimeoutMs: int('TRELLIS_PARSE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    maxDecompressedBytes: int('TRELLIS_MAX_DECOMPRESSED_BYTES', 200 * 1024 * 1024, 1024, 2 ** 31 - 1),
    admission: {
      maxConcurrent: int('TRELLIS_MAX_CONCURRENT_REQUESTS', 16, 0, 100_000),
      maxQueued: int('TRELLIS_MAX_QUEUED_REQUESTS', 32, 0, 100_000),
      maxQueueWaitMs: int('TRELLIS_MAX_QUEUE_WAIT_MS', 50, 1, 60_000),
      maxEventLoopDelayMs: int('TRELLIS_MAX_EVENT_LOOP_DELAY_MS', 100, 0, 60_000),
    },
    logLevel,
    dbUrl,
    kafkaBrokers,
    kafka: {
      topicPrefix: text('TRELLIS_KAFKA_TOPIC_PREFIX') ?? '',
      partitions: int('TRELLIS_KAFKA_PARTITIONS', 6, 1, 1000),
      replicationFactor: int('TRELLIS_KAFKA_REPLICATION_FACTOR', 1, 1, 10),
      concurrency: int('TRELLIS_KAFKA_CONCURRENCY', 2, 1, 64),
      sessionTimeoutMs: int('TRELLIS_KAFKA_SESSION_TIMEOUT_MS', 30_000, 6_000, 300_000),
    },
    dbPoolSize: int('TRELLIS_DB_POOL_SIZE', 10, 1, 200),
    urlFetchTimeoutMs: int('TRELLIS_URL_FETCH_TIMEOUT_MS', 30_000, 100, 600_000),
    urlFetchMaxRedirects: int('TRELLIS_URL_FETCH_MAX_REDIRECTS', 5, 0, 20),
    urlFetchAllow: urlFetchAllowList(text('TRELLIS_URL_FETCH_ALLOW'), problems),
    apiKeys,
    internalToken,
    metricsToken: text('TRELLIS_METRICS_TOKEN'),
    metricsNames: metricsNames === 'true',
    retrievalAddress: text('TRELLIS_RETRIEVAL_ADDRESS') ?? '127.0.0.1:50051',
    reranker: {
      kind: rerankerKind as 'none' | 'local' | 'http',
      url: rerankerUrl,
      model: text('TRELLIS_RERANKER_MODEL') ?? 'rerank-v3.5',
      apiKey: text('TRELLIS_RERANKER_API_KEY'),
    },
    resolution,
    sweeper: {
      intervalMs: int('TRELLIS_SWEEP_INTERVAL_MS', 60_000, 0, 86_400_000),
      stuckAfterMs: int('TRELLIS_STUCK_AFTER_MS', 600_000, 100, 604_800_000),
      maxRedrives: int('TRELLIS_MAX_REDRIVES', 5, 1, 1000),
    },
    embeddings,
    httpApi: httpApiSettings(text, int, problems),
    openai: {
      enabled: baseUrl !== undefined || apiKey !== undefined,
      baseUrl,
      apiKey,
      chatModel: text('TRELLIS_LLM_MODEL') ?? 'gpt-4o-mini',
      timeoutMs: int('TRELLIS_LLM_TIMEOUT_MS', 60_000, 100, 600_000),
      maxRetries: int('TRELLIS_LLM_MAX_RETRIES', 3, 0, 20),
      maxConcurrency: int('TRELLIS_LLM_MAX_CONCURRENCY', 0, 0, 10_000),
      requestsPerMinute: int('TRELLIS_LLM_REQUESTS_PER_MINUTE', 0, 0, 10_000_000),
      tokensPerMinute: int('TRELLIS_LLM_TOKENS_PER_MINUTE', 0, 0, 1_000_000_000),
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function embeddingSettings(
  env: Env,
  text: (name: string) => string | undefined,
  int: (name: string, fallback: number, min: number, max: number) => number,
  llmBaseUrl: string | undefined,
  llmApiKey: string | undefined,
  problems: string[],
): EmbeddingSettings {
  const requested = text('TRELLIS_EMBEDDINGS');
  if (requested !== undefined && !['local', 'openai', 'hash'].includes(requested)) problems.push('TRELLIS_EMBEDDINGS must be local, openai or hash');
  const provider = (requested ?? 'local') as EmbeddingSettings['provider'];
  const baseUrl = text('TRELLIS_EMBEDDING_BASE_URL') ?? llmBaseUrl;
  const apiKey = text('TRELLIS_EMBEDDING_API_KEY') ?? llmApiKey;
  if (text('TRELLIS_EMBEDDING_BASE_URL') !== undefined && !/^https?:\/\//.test(baseUrl!)) problems.push('TRELLIS_EMBEDDING_BASE_URL must be an http(s) URL');
  if (provider === 'openai' && baseUrl === undefined && apiKey === undefined) {
    problems.push('TRELLIS_EMBEDDINGS=openai needs TRELLIS_EMBEDDING_BASE_URL or OPENAI_BASE_URL (or an API key for api.openai.com)');
  }
  const hubUrl = text('TRELLIS_MODEL_HUB_URL') ?? 'https://huggingface.co';
  if (!/^https?:\/\//.test(hubUrl)) problems.push('TRELLIS_MODEL_HUB_URL must be an http(s) URL');
  const download = text('TRELLIS_MODEL_DOWNLOAD') ?? 'true';
  if (!['true', 'false'].includes(download)) problems.push('TRELLIS_MODEL_DOWNLOAD must be true or false');
  const modelDir = text('TRELLIS_EMBEDDING_MODEL_DIR');
  const quantize = text('TRELLIS_EMBEDDING_QUANTIZE') ?? 'true';
  if (!['true', 'false'].includes(quantize)) problems.push('TRELLIS_EMBEDDING_QUANTIZE must be true or false');
  return {
    provider,
    explicit: requested !== undefined,
    model: text('TRELLIS_EMBEDDING_MODEL') ?? (provider === 'openai' ? 'text-embedding-3-small' : 'all-MiniLM-L6-v2'),
    dimensions: int('TRELLIS_EMBEDDING_DIMENSIONS', provider === 'openai' ? 1536 : 0, 0, 8192),
    modelDir: modelDir === undefined ? undefined : resolve(modelDir),
    cacheDir: resolve(text('TRELLIS_MODEL_CACHE_DIR') ?? join(env.HOME ?? homedir(), '.cache', 'trellis', 'models')),
    download: download === 'true',
    quantize: quantize === 'true',
    hubUrl,
    threads: int('TRELLIS_EMBEDDING_THREADS', Math.min(4, availableParallelism()), 1, 64),
    baseUrl,
    apiKey,
  };
}

/** CIDRs (`10.0.0.0/8`, `fd00::/8`), single addresses and host names, each checked. */
function urlFetchAllowList(raw: string | undefined, problems: string[]): string[] {
  const entries = (raw ?? '').split(',').map((e) => e.trim().toLowerCase()).filter((e) => e !== '');
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const validPrefix = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    const hostName = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?$/.test(entry);
    if (!((family !== 0 && validPrefix && extra === undefined) || hostName)) {
      problems.push(`TRELLIS_URL_FETCH_ALLOW entry "${entry}" is not a CIDR, an IP address or a host name`);
    }
  }
  return entries;
}
