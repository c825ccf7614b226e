import { resolve } from 'node:path';
import { readAccessSettings } from './access-settings';
import type { AccessSettings } from './access-settings';
import { readEmbeddingSettings } from './embedding-settings';
import type { EmbeddingSettings } from './embedding-settings';
import { EnvReader } from './env-reader';
import { readHttpApiSettings } from './http-api-settings';
import type { HttpApiSettings } from './http-api-settings';
import { readLlmSettings } from './llm-settings';
import { readOutboxSettings } from './outbox-settings';
import type { OutboxSettings } from './outbox-settings';
import type { OpenAiSettings } from './llm-settings';
import { readResolutionDefaults } from './resolution-defaults';
import type { ResolutionDefaults } from './resolution-defaults';
import { readInfrastructure } from './runtime-mode';
import type { Infrastructure } from './runtime-mode';

export interface TrellisConfig extends Infrastructure, AccessSettings {
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
  /**
   * TRELLIS_FRONT_THREAD (standalone server only): a worker thread owns the public gRPC and
   * HTTP ports, applies the load shedding above, answers gRPC health, /healthz and /readyz
   * itself, and forwards everything else to the main thread over Unix sockets, so refusals and
   * health checks are answered at once while query work keeps the main thread busy. Default
   * true; false serves both ports from the main thread (the distributed services always do).
   */
  readonly frontThread: boolean;
  /**
   * TRELLIS_HEAP_GROWTH_PERCENT: how far V8 lets the JavaScript heap grow past what the last
   * full collection kept before it collects again (V8's --heap-growing-percent). Default 50.
   * V8's own rule lets a large machine's heap reach about four times its live size between
   * full collections: a server keeping 140 MB of indexes then held 480 MB of heap after 600
   * questions at 100k chunks (docs/benchmarks.md). 0 leaves V8's rule.
   */
  readonly heapGrowthPercent: number;
  /** TRELLIS_LOG_LEVEL: fatal, error, warn, info, debug, trace or silent. */
  readonly logLevel: string;
  readonly kafka: {
    /** TRELLIS_KAFKA_TOPIC_PREFIX: prepended to topic and group names (several deployments, one cluster). */
    readonly topicPrefix: string;
    /** TRELLIS_KAFKA_PARTITIONS: partitions of the topics `trellis topics ensure` creates. Default 6. */
    readonly partitions: number;
    /** TRELLIS_KAFKA_REPLICATION_FACTOR: replicas of those topics. Default 1. */
    readonly replicationFactor: number;
    /** TRELLIS_KAFKA_CONCURRENCY: partitions one consumer handles at once. Default 2. */
    readonly concurrency: number;
    /** TRELLIS_KAFKA_EVENTS_PER_PARTITION: events of distinct keys handled at once within one of them. Default 4. */
    readonly eventsPerPartition: number;
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
  readonly outbox: OutboxSettings;
  readonly llmCost: LlmCostSettings;
  readonly httpApi: HttpApiSettings;
  readonly chat: ChatSettings;
}

/** How much of a saved conversation a chat turn reads, and how long condensation may take. */
export interface ChatSettings {
  /** TRELLIS_CHAT_HISTORY_TURNS: question-and-answer pairs read from a conversation. Default 6. */
  readonly historyTurns: number;
  /** TRELLIS_CHAT_HISTORY_CHARS: characters of those messages together, newest kept. Default 6000. */
  readonly historyChars: number;
  /** TRELLIS_CHAT_CONDENSE_TIMEOUT_MS: wait for the model's condensation before the deterministic one. Default 10000. */
  readonly condenseTimeoutMs: number;
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

/** Ingest estimates and per-knowledge-base LLM budgets. */
export interface LlmCostSettings {
  /**
   * TRELLIS_ESTIMATE_OUTPUT_PERCENT: output tokens an extraction call is expected to return per
   * 100 input tokens, for knowledge bases without enough extraction calls of their own to learn
   * it from (estimates use their measured ratio once they have). Default 60.
   */
  readonly estimateOutputPercent: number;
  /** TRELLIS_BUDGET_RESUME_INTERVAL_MS: how often extraction paused by a budget is checked for resuming. Default 10000. */
  readonly budgetResumeIntervalMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Builds the configuration from environment variables, once, at start-up. Every problem
 * is collected so a bad deployment fails listing all of them, not the first.
 */
export function loadConfig(environment: Readonly<Record<string, string | undefined>>, serviceName: string): TrellisConfig {
  const env = new EnvReader(environment);
  const infrastructure = readInfrastructure(env);
  const openai = readLlmSettings(env);
  const rerankerKind = env.choice('TRELLIS_RERANKER', ['none', 'local', 'http'] as const, 'none');
  const rerankerUrl = env.text('TRELLIS_RERANKER_URL');
  if (rerankerKind === 'http' && (rerankerUrl === undefined || !/^https?:\/\//.test(rerankerUrl))) {
    env.problems.push('TRELLIS_RERANKER_URL must be an http(s) URL when TRELLIS_RERANKER=http');
  }
  const config: TrellisConfig = {
    ...infrastructure,
    ...readAccessSettings(env, infrastructure.mode),
    serviceName,
    dataDir: resolve(env.text('TRELLIS_DATA_DIR') ?? '.trellis'),
    grpcHost: env.text('TRELLIS_GRPC_HOST') ?? '127.0.0.1',
    grpcPort: env.int('TRELLIS_GRPC_PORT', 50051, 0, 65535),
    httpHost: env.text('TRELLIS_HTTP_HOST') ?? env.text('TRELLIS_GRPC_HOST') ?? '127.0.0.1',
    httpPort: env.int('TRELLIS_HTTP_PORT', 8080, 0, 65535),
    maxUploadBytes: env.int('TRELLIS_MAX_UPLOAD_BYTES', 50 * 1024 * 1024, 1, 2 ** 31 - 1),
    parseTimeoutMs: env.int('TRELLIS_PARSE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    maxDecompressedBytes: env.int('TRELLIS_MAX_DECOMPRESSED_BYTES', 200 * 1024 * 1024, 1024, 2 ** 31 - 1),
    admission: {
      maxConcurrent: env.int('TRELLIS_MAX_CONCURRENT_REQUESTS', 16, 0, 100_000),
      maxQueued: env.int('TRELLIS_MAX_QUEUED_REQUESTS', 32, 0, 100_000),
      maxQueueWaitMs: env.int('TRELLIS_MAX_QUEUE_WAIT_MS', 50, 1, 60_000),
      maxEventLoopDelayMs: env.int('TRELLIS_MAX_EVENT_LOOP_DELAY_MS', 100, 0, 60_000),
    },
    frontThread: env.flag('TRELLIS_FRONT_THREAD', true),
    heapGrowthPercent: env.int('TRELLIS_HEAP_GROWTH_PERCENT', 50, 0, 1000),
    logLevel: env.choice('TRELLIS_LOG_LEVEL', LOG_LEVELS, 'info'),
    kafka: {
      topicPrefix: env.text('TRELLIS_KAFKA_TOPIC_PREFIX') ?? '',
      partitions: env.int('TRELLIS_KAFKA_PARTITIONS', 6, 1, 1000),
      replicationFactor: env.int('TRELLIS_KAFKA_REPLICATION_FACTOR', 1, 1, 10),
      concurrency: env.int('TRELLIS_KAFKA_CONCURRENCY', 2, 1, 64),
      eventsPerPartition: env.int('TRELLIS_KAFKA_EVENTS_PER_PARTITION', 4, 1, 256),
      sessionTimeoutMs: env.int('TRELLIS_KAFKA_SESSION_TIMEOUT_MS', 30_000, 6_000, 300_000),
    },
    dbPoolSize: env.int('TRELLIS_DB_POOL_SIZE', 10, 1, 200),
    urlFetchTimeoutMs: env.int('TRELLIS_URL_FETCH_TIMEOUT_MS', 30_000, 100, 600_000),
    urlFetchMaxRedirects: env.int('TRELLIS_URL_FETCH_MAX_REDIRECTS', 5, 0, 20),
    retrievalAddress: env.text('TRELLIS_RETRIEVAL_ADDRESS') ?? '127.0.0.1:50051',
    reranker: {
      kind: rerankerKind,
      url: rerankerUrl,
      model: env.text('TRELLIS_RERANKER_MODEL') ?? 'rerank-v3.5',
      apiKey: env.text('TRELLIS_RERANKER_API_KEY'),
    },
    resolution: readResolutionDefaults(env),
    sweeper: {
      intervalMs: env.int('TRELLIS_SWEEP_INTERVAL_MS', 60_000, 0, 86_400_000),
      stuckAfterMs: env.int('TRELLIS_STUCK_AFTER_MS', 600_000, 100, 604_800_000),
      maxRedrives: env.int('TRELLIS_MAX_REDRIVES', 5, 1, 1000),
    },
    outbox: readOutboxSettings(env),
    llmCost: {
      estimateOutputPercent: env.int('TRELLIS_ESTIMATE_OUTPUT_PERCENT', 60, 1, 10_000),
      budgetResumeIntervalMs: env.int('TRELLIS_BUDGET_RESUME_INTERVAL_MS', 10_000, 50, 3_600_000),
    },
    embeddings: readEmbeddingSettings(env, openai.baseUrl, openai.apiKey),
    httpApi: readHttpApiSettings(env),
    chat: {
      historyTurns: env.int('TRELLIS_CHAT_HISTORY_TURNS', 6, 0, 10),
      historyChars: env.int('TRELLIS_CHAT_HISTORY_CHARS', 6000, 0, 32_000),
      condenseTimeoutMs: env.int('TRELLIS_CHAT_CONDENSE_TIMEOUT_MS', 10_000, 100, 600_000),
    },
    openai,
  };
  if (env.problems.length > 0) throw new ConfigError(env.problems);
  return config;
}
