import { SpanKind, SpanStatusCode, context as otelContext, trace } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';
import { trellisTracer } from '@trellis/observability';
import type { TrellisStore } from '@trellis/storage';

/** `db.system.name` of the adapters: SQLite in standalone, a MySQL-protocol server in distributed mode. */
export type DatabaseSystem = 'sqlite' | 'mysql' | 'mariadb' | 'tidb';

export interface StoreTracingOptions {
  readonly system: DatabaseSystem;
  /**
   * `TRELLIS_TRACE_CONTENT`: also put the search text of full-text and entity-name lookups
   * (`trellis.request.text`) and error messages on the spans. Off, spans carry the method,
   * the tenant and knowledge-base ids and the error's code only: never SQL, document text
   * or queries, and no error message (a duplicate-key message quotes the row).
   */
  readonly traceContent?: boolean;
}

/** Methods that are not storage work worth a span: probes call `ping` on every scrape. */
const UNTRACED = new Set<string>(['ping', 'close']);

/** Methods whose string argument at this position is the user's search text. */
const SEARCH_TEXT_ARGUMENT: Readonly<Record<string, number>> = { searchChunksFullText: 1, searchEntitiesByName: 1 };

/**
 * The store with a CLIENT span (`db.<method>`) around every call made inside a trace, for
 * both adapters and every service at once. Calls outside any trace (boot, readiness probes,
 * the backlog gauge at scrape time) get no span: a root trace of one query tells nobody
 * anything. Apply it only when the SDK runs (`tracingStarted()`), so an untraced process
 * calls the adapter directly.
 */
export function traceStore(store: TrellisStore, options: StoreTracingOptions): TrellisStore {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || UNTRACED.has(property)) return value;
      let traced = wrapped.get(property);
      if (traced === undefined) {
        const method = value as (...args: unknown[]) => unknown;
        traced = (...args: unknown[]) => callTraced(target, method, property, args, options);
        wrapped.set(property, traced);
      }
      return traced;
    },
  });
}

function callTraced(target: TrellisStore, method: (...args: unknown[]) => unknown, name: string, args: unknown[], options: StoreTracingOptions): unknown {
  const parent = otelContext.active();
  if (trace.getSpan(parent) === undefined) return method.apply(target, args);
  const span = trellisTracer().startSpan(`db.${name}`, { kind: SpanKind.CLIENT, attributes: spanAttributes(name, args, options) }, parent);
  let result: unknown;
  try {
    result = otelContext.with(trace.setSpan(parent, span), () => method.apply(target, args));
  } catch (error) {
    endFailed(span, error, options);
    throw error;
  }
  if (!(result instanceof Promise)) {
    span.end();
    return result;
  }
  return result.then(
    (value: unknown) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      endFailed(span, error, options);
      throw error;
    },
  );
}

function spanAttributes(name: string, args: readonly unknown[], options: StoreTracingOptions): Attributes {
  const attributes: Attributes = { 'db.system.name': options.system, 'db.operation.name': name };
  const scope = args[0] as { tenantId?: unknown; kbId?: unknown } | undefined;
  if (typeof scope === 'object' && scope !== null) {
    if (typeof scope.tenantId === 'string') attributes['trellis.tenant'] = scope.tenantId;
    if (typeof scope.kbId === 'string') attributes['trellis.knowledge_base_id'] = scope.kbId;
  }
  const textAt = SEARCH_TEXT_ARGUMENT[name];
  if (options.traceContent && textAt !== undefined && typeof args[textAt] === 'string') {
    attributes['trellis.request.text'] = (args[textAt] as string).slice(0, 2_000);
  }
  return attributes;
}

/** Status ERROR with the error's code (a TrellisError's, the driver's) or class; the message only when content is traced. */
function endFailed(span: Span, error: unknown, options: StoreTracingOptions): void {
  const err = error instanceof Error ? error : new Error(String(error));
  const code = (err as { code?: unknown }).code;
  const type = typeof code === 'string' || typeof code === 'number' ? String(code) : err.name;
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: options.traceContent ? err.message : type });
  span.end();
}
