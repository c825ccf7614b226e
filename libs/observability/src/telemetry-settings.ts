import { parseLlmPrices } from './llm-prices';
import type { LlmPriceTable } from './llm-prices';

/** Observability settings from the environment: the standard `OTEL_*` variables and Trellis's own. */
export interface TelemetrySettings {
  /** Whether an exporter is configured, so traces are worth recording at all. */
  readonly tracingEnabled: boolean;
  /**
   * `TRELLIS_TRACE_CONTENT=true` puts the question or query of gRPC requests into their
   * server span (`trellis.request.text`). Off by default: spans then carry methods, status
   * codes, topics, models and token counts only. Document text and prompts are never traced.
   */
  readonly traceContent: boolean;
  /** `OTEL_SERVICE_NAME`, which wins over the name a process gives itself. */
  readonly serviceName: string | undefined;
  /** Per-model prices for `trellis_llm_estimated_cost_dollars_total`. */
  readonly llmPrices: LlmPriceTable;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Read once at boot, beside the typed configuration. Tracing is on when an exporter is
 * named (`OTEL_TRACES_EXPORTER`, not `none`) or an OTLP endpoint is set, and
 * `OTEL_SDK_DISABLED` is not `true`: without a collector there is nothing to pay for.
 */
export function loadTelemetrySettings(env: Env): TelemetrySettings {
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  const tracingEnabled = !disabled && (exporter ? exporter !== 'none' : Boolean(endpoint));
  return {
    tracingEnabled,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || undefined,
    traceContent: env.TRELLIS_TRACE_CONTENT?.trim().toLowerCase() === 'true',
    llmPrices: parseLlmPrices(env.TRELLIS_LLM_PRICES),
  };
}
