import type { FactoryProvider } from '@nestjs/common';
import { TrellisError } from '@trellis/contracts';
import type { TopicName, TopicPayload } from '@trellis/contracts';
import { EVENT_BUS } from '@trellis/messaging';
import type { EventBus, SubscribeOptions } from '@trellis/messaging';
import { SpanKind, context as otelContext, trace } from '@opentelemetry/api';
import { LOGGER, METRICS, contextFromCarrier, failSpan, trellisTracer } from '@trellis/observability';
import type { Logger, TrellisMetrics } from '@trellis/observability';
import type { DocumentRepository } from '@trellis/storage';
import { DOCUMENT_REPOSITORY } from './repository-tokens';
import { PipelineStages } from './pipeline-stages';
import { STORE_AVAILABILITY } from './store-availability';
import type { StoreAvailability } from './store-availability';

/**
 * Subscribes a domain handler to a topic with metrics, logs and a consumer span around it.
 * The span continues the `traceparent` the publisher put in the event's headers and is
 * active while the handler runs, so what the handler publishes continues the same trace.
 * Consumers in every service use this, so all event handling is measured the same way.
 */
export async function consumeTopic<T extends TopicName>(
  deps: { bus: EventBus; metrics: TrellisMetrics; logger: Logger; availability: StoreAvailability; stages: PipelineStages },
  topic: T,
  group: string,
  handle: (payload: TopicPayload<T>) => Promise<void>,
  onFailure: (payload: TopicPayload<T>, error: Error) => Promise<void>,
  parallelism: Pick<SubscribeOptions<T>, 'concurrency' | 'eventsPerPartition'> = {},
): Promise<void> {
  await deps.bus.subscribe(
    topic,
    {
      group,
      ...parallelism,
      onDeadLetter: async (event, error) => {
        deps.metrics.eventsHandled.inc({ topic, group, outcome: 'dead_letter' });
        await onFailure(event.payload, error);
      },
    },
    async (event) => {
      const facts = eventContextOf(event.payload);
      // The header is the carrier; the payload's own traceparent field is the fallback for
      // events published by something that only filled the payload.
      const parent = contextFromCarrier(event.headers.traceparent || !facts.traceparent ? event.headers : { ...event.headers, traceparent: facts.traceparent });
      const span = trellisTracer().startSpan(
        `${topic} process`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'messaging.operation.type': 'process',
            'messaging.destination.name': topic,
            'messaging.consumer.group.name': group,
            'trellis.event.attempt': event.attempt,
            ...(facts.tenantId ? { 'trellis.tenant': facts.tenantId } : {}),
          },
        },
        parent,
      );
      if (event.attempt > 1) deps.metrics.eventRetries.inc({ topic, group });
      const stop = deps.metrics.eventDuration.startTimer({ topic });
      const startedAt = new Date();
      try {
        await otelContext.with(trace.setSpan(parent, span), () => handleWhileStoreIsUp(event.payload, event.key));
        deps.metrics.eventsHandled.inc({ topic, group, outcome: 'ok' });
        await deps.stages.record(topic, event.payload, startedAt);
      } catch (error) {
        await deps.stages.record(topic, event.payload, startedAt, error as Error);
        failSpan(span, error);
        deps.metrics.eventsHandled.inc({ topic, group, outcome: 'error' });
        // A TrellisError is an expected outcome; anything else is a bug, and its stack says where.
        const unexpected = !(error instanceof TrellisError);
        deps.logger.warn(
          { topic, group, tenant: facts.tenantId, attempt: event.attempt, err: (error as Error).message, ...(unexpected ? { stack: (error as Error).stack } : {}) },
          'event handling failed',
        );
        throw error;
      } finally {
        span.end();
        stop();
      }
    },
  );

  /** Handles one event; while the store is down, waits for it instead of failing the event. */
  async function handleWhileStoreIsUp(payload: TopicPayload<T>, key: string): Promise<void> {
    for (;;) {
      try {
        await handle(payload);
        return;
      } catch (error) {
        if (!(await deps.availability.isDown())) throw error;
        await deps.availability.waitUntilUp({ topic, group, key });
      }
    }
  }
}

/** The tenant and trace context every indexing event carries in its `context` field. */
function eventContextOf(payload: unknown): { tenantId?: string; traceparent?: string } {
  const context = (payload as { context?: { tenantId?: unknown; traceparent?: unknown } } | undefined)?.context;
  return {
    tenantId: typeof context?.tenantId === 'string' && context.tenantId !== '' ? context.tenantId : undefined,
    traceparent: typeof context?.traceparent === 'string' && context.traceparent !== '' ? context.traceparent : undefined,
  };
}

export interface TopicConsumerSpec<T extends TopicName, S> {
  readonly topic: T;
  readonly group: string;
  /** The domain service that handles the events. */
  readonly service: abstract new (...args: never[]) => S;
  readonly handle: (service: S, payload: TopicPayload<T>) => Promise<void>;
  readonly onFailure: (service: S, payload: TopicPayload<T>, error: Error) => Promise<void>;
  /** Events handled at once on the in-process bus, when not its default (SubscribeOptions.concurrency). */
  readonly concurrency?: number;
  /** On Kafka, events of distinct keys handled at once within a partition, when more than configured (SubscribeOptions.eventsPerPartition). */
  readonly eventsPerPartition?: number;
}

/**
 * A Nest provider that subscribes a domain service to a topic when the module starts: the
 * event-consumer edge of a service, declared in one statement.
 */
export function topicConsumer<T extends TopicName, S>(spec: TopicConsumerSpec<T, S>): FactoryProvider {
  return {
    provide: Symbol.for(`trellis.consumer.${spec.group}.${spec.topic}`),
    inject: [EVENT_BUS, METRICS, LOGGER, STORE_AVAILABILITY, DOCUMENT_REPOSITORY, spec.service],
    useFactory: async (bus: EventBus, metrics: TrellisMetrics, logger: Logger, availability: StoreAvailability, documents: DocumentRepository, service: S) => {
      await consumeTopic(
        { bus, metrics, logger, availability, stages: new PipelineStages(documents, logger) },
        spec.topic,
        spec.group,
        (payload) => spec.handle(service, payload),
        (payload, error) => spec.onFailure(service, payload, error),
        { concurrency: spec.concurrency, eventsPerPartition: spec.eventsPerPartition },
      );
      return spec;
    },
  };
}
