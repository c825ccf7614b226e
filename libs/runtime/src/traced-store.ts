import { SpanKind, SpanStatusCode, context as otelContext, trace } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';
import { trellisTracer } from '@trellis/observability';
import type { TrellisRepositories } from '@trellis/storage';

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

/** Methods whose string argument at this position is the user's search text. */
const SEARCH_TEXT_ARGUMENT: Readonly<Record<string, number>> = { searchChunksFullText: 1, searchEntitiesByName: 1, searchEntityNodesByName: 1 };

/**
 * The repositories with a CLIENT span (`db.<method>`) around every call made inside a trace,
 * for both adapters and every service at once: each repository behind a proxy that wraps
 * whatever methods it has. Calls outside any trace (boot, the backlog gauge at scrape time) get
 * no span: a root trace of one query tells nobody anything; the connection (readiness probes'
 * `ping`) is not a repository and is never traced. Apply it only when the SDK runs
 * (`tracingStarted()`), so an untraced process calls the adapter directly.
 */
export function traceRepositories(repositories: TrellisRepositories, options: StoreTracingOptions): TrellisRepositories {
  const traced = Object.entries(repositories).map(([name, repository]: [string, object]) => [name, traceRepository(repository, options)]);
  return Object.fromEntries(traced) as TrellisRepositories;
}

function traceRepository<T extends object>(repository: T, options: StoreTracingOptions): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(repository, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value;
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

function callTraced(target: object, method: (...args: unknown[]) => unknown, name: string, args: unknown[], options: StoreTracingOptions): unknown {
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
