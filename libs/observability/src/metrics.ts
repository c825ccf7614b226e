import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's Prometheus metrics. Label values are bounded sets (method names, status
 * codes, topics, outcomes): never document or chunk ids.
 */
export class TrellisMetrics {
  readonly registry = new Registry();

  readonly grpcRequests = new Counter({
    name: 'trellis_grpc_requests_total',
    help: 'gRPC requests handled, by method and status code.',
    labelNames: ['service', 'method', 'code'] as const,
    registers: [this.registry],
  });

  readonly grpcDuration = new Histogram({
    name: 'trellis_grpc_request_duration_seconds',
    help: 'gRPC request latency, by method.',
    labelNames: ['service', 'method'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly eventsHandled = new Counter({
    name: 'trellis_events_handled_total',
    help: 'Indexing events handled, by topic, consumer group and outcome (ok; error, retried until it succeeds or dead_letter).',
    labelNames: ['topic', 'group', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly eventDuration = new Histogram({
    name: 'trellis_event_processing_duration_seconds',
    help: 'Time to handle one indexing event, by topic.',
    labelNames: ['topic'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
    registers: [this.registry],
  });

  readonly documentsIngested = new Counter({
    name: 'trellis_documents_ingested_total',
    help: 'Documents accepted for indexing, by outcome (new_version, unchanged, rejected).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor(serviceName: string) {
    this.registry.setDefaultLabels({ service: serviceName });
    collectDefaultMetrics({ register: this.registry, prefix: 'trellis_' });
  }
}

export const METRICS = Symbol.for('trellis.metrics');
