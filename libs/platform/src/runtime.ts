import { join } from 'node:path';
import type { TrellisConfig } from '@trellis/config';
import { InProcessEventBus } from '@trellis/messaging';
import type { EventBus } from '@trellis/messaging';
import { createModels } from '@trellis/models';
import type { Models } from '@trellis/models';
import { TrellisMetrics, createLogger } from '@trellis/observability';
import type { Logger } from '@trellis/observability';
import { SqliteStore } from '@trellis/storage';
import type { TrellisStore } from '@trellis/storage';

/** The infrastructure one process runs on: chosen by configuration, built once at boot. */
export interface Runtime {
  readonly config: TrellisConfig;
  readonly logger: Logger;
  readonly metrics: TrellisMetrics;
  readonly store: TrellisStore;
  readonly bus: EventBus;
  readonly models: Models;
}

export function createRuntime(config: TrellisConfig): Runtime {
  const logger = createLogger(config.serviceName, config.logLevel);
  if (config.mode === 'distributed') {
    throw new Error('distributed mode (Kafka + TiDB) is not available in this build yet; unset KAFKA_BROKERS to run standalone');
  }
  return {
    config,
    logger,
    metrics: new TrellisMetrics(config.serviceName),
    store: new SqliteStore(join(config.dataDir, 'trellis.db')),
    bus: new InProcessEventBus({ logger }),
    models: createModels(config),
  };
}
