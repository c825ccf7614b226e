import { Injectable } from '@nestjs/common';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { status } from '@grpc/grpc-js';
import type { Metadata } from '@grpc/grpc-js';
import { SpanKind, SpanStatusCode, context as otelContext, trace } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import { Observable, isObservable } from 'rxjs';
import { contextFromCarrier, trellisTracer } from '@trellis/observability';
import type { TrellisMetrics } from '@trellis/observability';
import { toGrpcError } from './grpc-errors';
import { grpcMethodOf } from './grpc-method';
import { keepDrainBuffer } from './malformed-request';

/** Retrieval modes a request can name; anything else is counted as `other`, keeping the label bounded. */
const RETRIEVAL_MODES = new Set(['vector', 'fulltext', 'graph', 'hybrid']);

/** Methods that take a document; their outcome feeds `trellis_documents_ingested_total`. */
const INGEST_METHODS = new Set(['UploadDocument', 'AddDocumentFromUrl']);

/** Status codes that mean the document itself was refused (as opposed to a server failure). */
const REJECTED = new Set<number>([status.INVALID_ARGUMENT, status.RESOURCE_EXHAUSTED, status.FAILED_PRECONDITION]);

/**
 * Measures and traces every gRPC call at the edge, unary and streaming alike: a server
 * span that continues the caller's `traceparent`, `trellis_grpc_requests_total` and
 * `trellis_grpc_request_duration_seconds` by method and status code name, retrieval
 * latency by mode, and ingest outcomes. Registered globally, so handlers stay thin.
 */
@Injectable()
export class GrpcTelemetryInterceptor implements NestInterceptor {
  constructor(
    private readonly metrics: TrellisMetrics,
    /** `TRELLIS_TRACE_CONTENT`: also put the request's question or query on the span. */
    private readonly traceContent = false,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    const { service: grpcService, method } = grpcMethodOf(context);
    const [request, metadata] = context.getArgs<[unknown, Metadata | undefined]>();
    const mode = grpcService === 'RetrievalService' ? retrievalMode(method, request) : undefined;

    const parent = contextFromCarrier(metadataCarrier(metadata));
    const span = trellisTracer().startSpan(
      `trellis.v1.${grpcService}/${method}`,
      { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc', 'rpc.service': `trellis.v1.${grpcService}`, 'rpc.method': method, ...(mode ? { 'trellis.retrieval.mode': mode } : {}) } },
      parent,
    );
    if (this.traceContent) {
      const question = requestText(request);
      if (question !== undefined) span.setAttribute('trellis.request.text', question);
    }
    const active = trace.setSpan(parent, span);
    // Client-streaming handlers do their work when the request stream ends, which grpc-js
    // signals from its own event context: deliver the request stream inside the span too.
    const args = context.getArgs<unknown[]>();
    if (isObservable(args[0])) args[0] = withContext(args[0], active);
    const started = performance.now();
    let done = false;
    const finish = (code: number, error?: unknown) => {
      if (done) return;
      done = true;
      const seconds = (performance.now() - started) / 1000;
      const codeName = status[code] ?? String(code);
      this.metrics.grpcRequests.inc({ method, code: codeName });
      this.metrics.grpcDuration.observe({ method, code: codeName }, seconds);
      if (mode !== undefined) this.metrics.retrievalDuration.observe({ method, mode }, seconds);
      span.setAttribute('rpc.grpc.status_code', code);
      if (code !== status.OK) span.setStatus({ code: SpanStatusCode.ERROR, message: codeName });
      if (error instanceof Error && code !== status.OK) span.recordException({ name: error.name, message: error.message });
      span.end();
    };
    // Handler and everything it calls (publishes included) run with the server span active.
    const inner = otelContext.with(active, () => next.handle());
    return new Observable<unknown>((subscriber) => {
      const subscription = otelContext.with(active, () =>
        inner.subscribe({
          next: (value) => {
            if (INGEST_METHODS.has(method)) this.metrics.documentsIngested.inc({ outcome: (value as { unchanged?: boolean }).unchanged ? 'unchanged' : 'new_version' });
            subscriber.next(value);
          },
          error: (error: unknown) => {
            const code = toGrpcError(error).grpc.code;
            if (INGEST_METHODS.has(method) && REJECTED.has(code)) this.metrics.documentsIngested.inc({ outcome: 'rejected' });
            finish(code, error);
            subscriber.error(error);
          },
          complete: () => {
            finish(status.OK);
            subscriber.complete();
          },
        }),
      );
      return () => {
        subscription.unsubscribe();
        // The caller went away before the handler finished.
        finish(status.CANCELLED);
      };
    });
  }
}

/** The mode label of a retrieval request: the requested mode, `hybrid` when unset (the default), `graph` for RetrieveGraph. */
function retrievalMode(method: string, request: unknown): string {
  if (method === 'RetrieveGraph') return 'graph';
  const requested = (request as { mode?: unknown } | undefined)?.mode;
  if (typeof requested !== 'string' || requested === '') return 'hybrid';
  const mode = requested.toLowerCase();
  return RETRIEVAL_MODES.has(mode) ? mode : 'other';
}

/** The question or query of a request, cut to a size a span can carry. */
function requestText(request: unknown): string | undefined {
  const fields = request as { query?: unknown; question?: unknown } | undefined;
  const text = typeof fields?.query === 'string' ? fields.query : typeof fields?.question === 'string' ? fields.question : undefined;
  return text === undefined || text === '' ? undefined : text.slice(0, 2_000);
}

function withContext<T>(source: Observable<T>, active: Context): Observable<T> {
  const bound = new Observable<T>((subscriber) =>
    source.subscribe({
      next: (value) => otelContext.with(active, () => subscriber.next(value)),
      error: (error: unknown) => otelContext.with(active, () => subscriber.error(error)),
      complete: () => otelContext.with(active, () => subscriber.complete()),
    }),
  );
  return keepDrainBuffer(source, bound);
}

function metadataCarrier(metadata: Metadata | undefined): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (metadata === undefined || typeof metadata.get !== 'function') return carrier;
  for (const key of ['traceparent', 'tracestate']) {
    const value = metadata.get(key)[0];
    if (typeof value === 'string') carrier[key] = value;
  }
  return carrier;
}
