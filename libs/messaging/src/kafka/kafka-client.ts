import { Kafka, logLevel } from 'kafkajs';
import type { LogEntry, logCreator } from 'kafkajs';
import type { KafkaBusLogger, ResolvedKafkaBusConfig } from './kafka-bus.config';

const KAFKA_LOG_LEVELS = { error: logLevel.ERROR, warn: logLevel.WARN, info: logLevel.INFO } as const;

/** The kafkajs client of a bus, logging through the bus's logger instead of the console. */
export function createKafkaClient(config: Pick<ResolvedKafkaBusConfig, 'brokers' | 'clientId' | 'kafkaLogLevel' | 'logger'>): Kafka {
  return new Kafka({
    brokers: [...config.brokers],
    clientId: config.clientId,
    logLevel: KAFKA_LOG_LEVELS[config.kafkaLogLevel],
    logCreator: routeLogsTo(config.logger),
  });
}

/** Routes kafkajs log entries to the bus's logger. */
export function routeLogsTo(logger: KafkaBusLogger): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _timestamp, logger: _origin, ...fields } = log;
      logger[severityOf(level, namespace, fields)]({ ...fields, kafkajs: namespace }, String(message));
    };
}

function severityOf(level: logLevel, namespace: string, fields: Record<string, unknown>): keyof KafkaBusLogger {
  if (level === logLevel.ERROR) return isRetriedAttempt(namespace, fields) ? 'warn' : 'error';
  return level === logLevel.WARN ? 'warn' : 'info';
}

/**
 * kafkajs logs every failed request and every failed try at ERROR, also when it is about to
 * retry (a partition leader moving, a group rebalancing). Those are warnings: if the retries
 * run out, the operation fails and its caller reports the error.
 */
function isRetriedAttempt(namespace: string, fields: Record<string, unknown>): boolean {
  return namespace === 'Connection' || fields['retryCount'] !== undefined;
}
