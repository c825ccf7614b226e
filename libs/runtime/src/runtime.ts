import { join } from 'node:path';
import type { TrellisConfig } from '@trellis/config';
import { InProcessEventBus, KafkaEventBus } from '@trellis/messaging';
import type { ConsumerCrash, EventBus, EventOutbox, KafkaBusConfig } from '@trellis/messaging';
import { createModels } from '@trellis/models';
import type { Models } from '@trellis/models';
import { TrellisMetrics, createLogger, currentTraceparent, tracingStarted } from '@trellis/observability';
import type { Logger, TelemetrySettings } from '@trellis/observability';
import { MysqlStore, SqliteStore } from '@trellis/storage';
import type { LlmBudgetRepository, StoreConnection, TrellisRepositories } from '@trellis/storage';
import { createEventOutbox } from './event-outbox.factory';
import { ModelMetricsObserver } from './model-telemetry';
import { SharedLlmBudget } from './shared-llm-budget';
import { StoreAvailability } from './store-availability';
import { TracedEventBus } from './traced-event-bus';
import { traceRepositories } from './traced-store';
import type { DatabaseSystem } from './traced-store';

/** The infrastructure one process runs on: chosen by configuration, built once at boot. */
export interface Runtime {
  readonly config: TrellisConfig;
  readonly logger: Logger;
  readonly metrics: TrellisMetrics;
  /** The store's repositories, one per aggregate (traced when tracing runs); modules inject the ones they use. */
  readonly repositories: TrellisRepositories;
  /** The store's connection: readiness and shutdown. */
  readonly database: StoreConnection;
  readonly bus: EventBus;
  /** What stages publish through: events committed with their change, published after it (see EventOutbox). */
  readonly outbox: EventOutbox;
  readonly models: Models;
  readonly availability: StoreAvailability;
  readonly telemetry: TelemetrySettings;
  /** Reads ahead what the first queries would wait for (standalone: SqliteStore.warm); none for the MySQL family. */
  readonly warm?: () => Promise<void>;
}

/**
 * Standalone: SQLite in the data directory and the in-process bus. Distributed: TiDB (or
 * another MySQL-protocol server) and Kafka. Everything above this line is the same code.
 */
export async function createRuntime(config: TrellisConfig, telemetry: TelemetrySettings): Promise<Runtime> {
  const logger = createLogger(config.serviceName, config.logLevel);
  const metrics = new TrellisMetrics(config.serviceName, { namesInLabels: config.metricsNames });
  const adapter =
    config.mode === 'standalone'
      ? new SqliteStore(join(config.dataDir, 'trellis.db'))
      : await MysqlStore.connect(config.dbUrl!, { poolSize: config.dbPoolSize, createDatabase: false, logger });
  const repositories = traced(adapter, telemetry);
  const models = await createModels(config, {
    observer: new ModelMetricsObserver(metrics, telemetry.llmPrices),
    budget: llmBudget(config, repositories.llmBudget),
    log: (line) => logger.info(line),
  });
  const warm = adapter instanceof SqliteStore ? () => adapter.warm() : undefined;
  const base = { config, logger, metrics, models, telemetry, repositories, database: adapter, warm, availability: new StoreAvailability(adapter, logger) };
  const bus = new TracedEventBus(config.mode === 'standalone' ? new InProcessEventBus({ logger, traceparent: currentTraceparent }) : new KafkaEventBus(kafkaBusConfig(config, logger, metrics)));
  return { ...base, bus, outbox: createEventOutbox(bus, repositories, config, metrics, logger) };
}

/** Repository calls become spans only when this process records spans; otherwise the adapter's repositories are called directly. */
function traced(store: SqliteStore | MysqlStore, telemetry: TelemetrySettings): TrellisRepositories {
  if (!tracingStarted()) return store.repositories;
  const system: DatabaseSystem = store instanceof MysqlStore ? store.databaseSystem : 'sqlite';
  return traceRepositories(store.repositories, { system, traceContent: telemetry.traceContent });
}

/** The deployment-wide chat call budget, or none when no limit is configured. */
function llmBudget(config: TrellisConfig, store: LlmBudgetRepository): SharedLlmBudget | undefined {
  const { maxConcurrency, requestsPerMinute, tokensPerMinute, timeoutMs, maxRetries } = config.openai;
  // A lease outlives the longest call: every attempt timing out, plus the SDK's backoff between them.
  const budget = new SharedLlmBudget(store, { maxConcurrency, requestsPerMinute, tokensPerMinute, leaseMs: timeoutMs * (maxRetries + 1) + 60_000 });
  return budget.limited ? budget : undefined;
}

/** The Kafka settings of a process, shared by the bus and the `trellis topics` / `dlq` commands. */
export function kafkaBusConfig(config: TrellisConfig, logger: Logger, metrics?: TrellisMetrics): KafkaBusConfig {
  return {
    brokers: config.kafkaBrokers,
    clientId: config.serviceName,
    topicPrefix: config.kafka.topicPrefix,
    partitions: config.kafka.partitions,
    replicationFactor: config.kafka.replicationFactor,
    partitionsConsumedConcurrently: config.kafka.concurrency,
    eventsPerPartition: config.kafka.eventsPerPartition,
    consumer: { sessionTimeoutMs: config.kafka.sessionTimeoutMs, heartbeatIntervalMs: Math.min(3_000, Math.floor(config.kafka.sessionTimeoutMs / 3)) },
    logger,
    traceparent: currentTraceparent,
    ...(metrics ? { onConsumerCrash: (crash: ConsumerCrash) => metrics.consumerCrashes.inc({ group: crash.group, restarted_by: crash.restartedBy }) } : {}),
  };
}
