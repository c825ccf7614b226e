import type { EnvReader } from './env-reader';

export interface OpenAiSettings {
  /** OPENAI_BASE_URL: any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM, ...). */
  readonly baseUrl?: string;
  /** OPENAI_API_KEY. Never logged. */
  readonly apiKey?: string;
  /** TRELLIS_LLM_MODEL: chat and extraction model. */
  readonly chatModel: string;
  /** TRELLIS_LLM_TIMEOUT_MS: per-request timeout. */
  readonly timeoutMs: number;
  /** TRELLIS_LLM_MAX_RETRIES: retries of a request on 429, 5xx and timeouts, honouring Retry-After. Default 3. */
  readonly maxRetries: number;
  /** TRELLIS_LLM_MAX_CONCURRENCY: chat calls in flight per model across the whole deployment; 0 = unlimited. */
  readonly maxConcurrency: number;
  /** TRELLIS_LLM_REQUESTS_PER_MINUTE: chat calls started per minute per model, deployment-wide; 0 = unlimited. */
  readonly requestsPerMinute: number;
  /** TRELLIS_LLM_TOKENS_PER_MINUTE: chat tokens (input + output) per minute per model, deployment-wide; 0 = unlimited. */
  readonly tokensPerMinute: number;
}

/** The OpenAI-compatible provider of chat and extraction; `enabled` when a key or a base URL is set. */
export function readLlmSettings(env: EnvReader): OpenAiSettings & { readonly enabled: boolean } {
  const baseUrl = env.httpUrl('OPENAI_BASE_URL');
  const apiKey = env.text('OPENAI_API_KEY');
  return {
    enabled: baseUrl !== undefined || apiKey !== undefined,
    baseUrl,
    apiKey,
    chatModel: env.text('TRELLIS_LLM_MODEL') ?? 'gpt-4o-mini',
    timeoutMs: env.int('TRELLIS_LLM_TIMEOUT_MS', 60_000, 100, 600_000),
    maxRetries: env.int('TRELLIS_LLM_MAX_RETRIES', 3, 0, 20),
    maxConcurrency: env.int('TRELLIS_LLM_MAX_CONCURRENCY', 0, 0, 10_000),
    requestsPerMinute: env.int('TRELLIS_LLM_REQUESTS_PER_MINUTE', 0, 0, 10_000_000),
    tokensPerMinute: env.int('TRELLIS_LLM_TOKENS_PER_MINUTE', 0, 0, 1_000_000_000),
  };
}
