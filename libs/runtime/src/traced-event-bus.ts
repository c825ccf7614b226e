import { SpanKind, context as otelContext, trace } from '@opentelemetry/api';
import type { TopicName, TopicPayload } from '@trellis/contracts';
import type { ConsumerLag, ConsumerOf, DeadLetter, EventBus, EventHandler, SubscribeOptions } from '@trellis/messaging';
import { failSpan, trellisTracer } from '@trellis/observability';

/**
 * The event bus with a producer span around every publish. The span is active while the
 * adapter publishes, so the `traceparent` the adapter writes into the event's headers is
 * this span's, and the consumer's span becomes its child. Consumer spans are made where
 * events are handled (`consumeTopic`).
 */
export class TracedEventBus implements EventBus {
  constructor(private readonly inner: EventBus) {}

  async publish<T extends TopicName>(topic: T, key: string, payload: TopicPayload<T>, headers?: Record<string, string>): Promise<void> {
    const span = trellisTracer().startSpan(`${topic} publish`, {
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.operation.type': 'send', 'messaging.destination.name': topic },
    });
    try {
      await otelContext.with(trace.setSpan(otelContext.active(), span), () => this.inner.publish(topic, key, payload, headers));
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  subscribe<T extends TopicName>(topic: T, options: SubscribeOptions<T>, handler: EventHandler<T>): Promise<void> {
    return this.inner.subscribe(topic, options, handler);
  }

  deadLetters(topic: TopicName): Promise<DeadLetter[]> {
    return this.inner.deadLetters(topic);
  }

  replayDeadLetters(topic: TopicName): Promise<number> {
    return this.inner.replayDeadLetters(topic);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  stop(): Promise<void> {
    return this.inner.stop();
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  consumerLag(of?: readonly ConsumerOf[]): Promise<ConsumerLag[]> {
    return this.inner.consumerLag(of);
  }
}
