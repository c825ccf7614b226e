import type { FactoryProvider } from '@nestjs/common';
import type { TopicName, TopicPayload } from '@trellis/contracts';
import { EVENT_BUS } from '@trellis/messaging';
import type { EventBus } from '@trellis/messaging';
import { LOGGER, METRICS } from '@trellis/observability';
import type { Logger, TrellisMetrics } from '@trellis/observability';
import { STORE_AVAILABILITY } from './store-availability';
import type { StoreAvailability } from './store-availability';

/**
 * Subscribes a domain handler to a topic with metrics and logs around it. Consumers in
 * every service use this, so all event handling is measured the same way.
 */
export async function consumeTopic<T extends TopicName>(
  deps: { bus: EventBus; metrics: TrellisMetrics; logger: Logger; availability: StoreAvailability },
  topic: T,
  group: string,
  handle: (payload: TopicPayload<T>) => Promise<void>,
  onFailure: (payload: TopicPayload<T>, error: Error) => Promise<void>,
): Promise<void> {
  await deps.bus.subscribe(
    topic,
    {
      group,
      onDeadLetter: async (event, error) => {
        deps.metrics.eventsHandled.inc({ topic, group, outcome: 'dead_letter' });
        await onFailure(event.payload, error);
      },
    },
    async (event) => {
      const stop = deps.metrics.eventDuration.startTimer({ topic });
      try {
        for (;;) {
          try {
            await handle(event.payload);
            break;
          } catch (error) {
            if (!(await deps.availability.isDown())) throw error;
            await deps.availability.waitUntilUp({ topic, group, key: event.key });
          }
        }
        deps.metrics.eventsHandled.inc({ topic, group, outcome: 'ok' });
      } catch (error) {
        deps.metrics.eventsHandled.inc({ topic, group, outcome: 'error' });
        deps.logger.warn({ topic, group, attempt: event.attempt, err: (error as Error).message }, 'event handling failed');
        throw error;
      } finally {
        stop();
      }
    },
  );
}

export interface TopicConsumerSpec<T extends TopicName, S> {
  readonly topic: T;
  readonly group: string;
  /** The domain service that handles the events. */
  readonly service: abstract new (...args: never[]) => S;
  readonly handle: (service: S, payload: TopicPayload<T>) => Promise<void>;
  readonly onFailure: (service: S, payload: TopicPayload<T>, error: Error) => Promise<void>;
}

/**
 * A Nest provider that subscribes a domain service to a topic when the module starts: the
 * event-consumer edge of a service, declared in one statement.
 */
export function topicConsumer<T extends TopicName, S>(spec: TopicConsumerSpec<T, S>): FactoryProvider {
  return {
    provide: Symbol.for(`trellis.consumer.${spec.group}.${spec.topic}`),
    inject: [EVENT_BUS, METRICS, LOGGER, STORE_AVAILABILITY, spec.service],
    useFactory: async (bus: EventBus, metrics: TrellisMetrics, logger: Logger, availability: StoreAvailability, service: S) => {
      await consumeTopic(
        { bus, metrics, logger, availability },
        spec.topic,
        spec.group,
        (payload) => spec.handle(service, payload),
        (payload, error) => spec.onFailure(service, payload, error),
      );
      return spec;
    },
  };
}
