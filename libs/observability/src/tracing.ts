import { ROOT_CONTEXT, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';

export interface TracingOptions {
  /** `service.name` of the spans unless `OTEL_SERVICE_NAME` says otherwise. */
  readonly serviceName: string;
  /** Where spans go; when omitted the SDK builds the exporter from `OTEL_*` variables. */
  readonly spanProcessors?: SpanProcessor[];
}

export interface TracingHandle {
  /** Whether this call started the SDK (and so owns its shutdown). */
  readonly started: boolean;
  /** Flushes and stops the exporter of the SDK this handle started; otherwise does nothing. */
  shutdown(): Promise<void>;
}

let running: NodeSDK | undefined;

/**
 * Starts the OpenTelemetry SDK once per Node process: W3C trace context propagation, an
 * async-hooks context manager and the exporter the `OTEL_*` variables configure. A second
 * call (several Trellis processes in one test run) reuses the first.
 */
export function startTracing(options: TracingOptions): TracingHandle {
  if (running !== undefined) return { started: false, shutdown: async () => undefined };
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    instrumentations: [],
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : {}),
  });
  sdk.start();
  running = sdk;
  return {
    started: true,
    shutdown: async () => {
      if (running !== sdk) return;
      running = undefined;
      await sdk.shutdown();
    },
  };
}

/**
 * Whether this process runs the SDK, so spans are recorded. Instrumentation that costs
 * something even as a no-op (wrapping every store call) is only put in place when it is.
 */
export function tracingStarted(): boolean {
  return running !== undefined;
}

/** The tracer every Trellis span comes from. Without a started SDK it records nothing. */
export function trellisTracer(): Tracer {
  return trace.getTracer('trellis');
}

/** W3C `traceparent` of the active span, for event headers; undefined when nothing is traced. */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The context a `traceparent` (event header or gRPC metadata) continues; the root without one. */
export function contextFromCarrier(carrier: Readonly<Record<string, string>>): Context {
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** Trace and span id of the active span, for log lines; empty when none is recording. */
export function activeTraceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (span === undefined) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (traceFlags === 0 && !span.isRecording()) return {};
  return { trace_id: traceId, span_id: spanId };
}

/** Ends a span as failed, keeping only the error's class and message. */
export function failSpan(span: Span, error: unknown): void {
  const err = error instanceof Error ? error : new Error(String(error));
  span.recordException({ name: err.name, message: err.message });
  span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
}
