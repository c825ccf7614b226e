import { InterceptingCall, status } from '@grpc/grpc-js';
import type { Interceptor, Metadata, StatusObject } from '@grpc/grpc-js';
import { SpanKind, SpanStatusCode, context as otelContext, propagation, trace } from '@opentelemetry/api';

/**
 * A @grpc/grpc-js client interceptor that traces outgoing calls, unary and streaming alike:
 * a CLIENT span `<package.Service>/<Method>` (child of whatever span is active when the call
 * is made) with `rpc.system`, `rpc.service`, `rpc.method` and `rpc.grpc.status_code`, and the
 * W3C `traceparent` of that span in the call's metadata, which the server's
 * `GrpcTelemetryInterceptor` continues. When this process records no spans (no tracing SDK
 * started: the OpenTelemetry API alone records nothing) it adds nothing. Only the API is
 * imported, so a client process (the CLI) loads no tracing SDK.
 */
export const grpcClientTracing: Interceptor = (options, nextCall) => {
  // '/trellis.v1.RetrievalService/RetrieveChunks'
  const [service = '', method = ''] = options.method_definition.path.replace(/^\//, '').split('/');
  const parent = otelContext.active();
  const span = trace.getTracer('trellis').startSpan(
    `${service}/${method}`,
    { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method } },
    parent,
  );
  if (!span.isRecording()) {
    span.end();
    return new InterceptingCall(nextCall(options));
  }
  const active = trace.setSpan(parent, span);
  let ended = false;
  const end = (result: StatusObject) => {
    if (ended) return;
    ended = true;
    span.setAttribute('rpc.grpc.status_code', result.code);
    // The code's name only: a server's details can quote the request.
    if (result.code !== status.OK) span.setStatus({ code: SpanStatusCode.ERROR, message: status[result.code] ?? String(result.code) });
    span.end();
  };
  return new InterceptingCall(nextCall(options), {
    start(metadata: Metadata, listener, next) {
      const carrier: Record<string, string> = {};
      propagation.inject(active, carrier);
      for (const [key, value] of Object.entries(carrier)) metadata.set(key, value);
      next(metadata, {
        onReceiveStatus(result, nextStatus) {
          end(result);
          nextStatus(result);
        },
      });
    },
  });
};
