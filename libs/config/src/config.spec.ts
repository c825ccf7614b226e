import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('gives standalone defaults with no environment', () => {
    const config = loadConfig({}, 'test');
    expect(config).toMatchObject({ mode: 'standalone', grpcHost: '127.0.0.1', grpcPort: 50051, httpPort: 8080, maxUploadBytes: 50 * 1024 * 1024 });
    expect(config.openai.enabled).toBe(false);
    expect(config.dataDir).toMatch(/\.trellis$/);
  });

  it('reads the load-shedding limits, with defaults for a small machine, and refuses bad ones', () => {
    expect(loadConfig({}, 't').admission).toEqual({ maxConcurrent: 16, maxQueued: 32, maxQueueWaitMs: 50, maxEventLoopDelayMs: 100 });
    const env = { TRELLIS_MAX_CONCURRENT_REQUESTS: '0', TRELLIS_MAX_QUEUED_REQUESTS: '5', TRELLIS_MAX_QUEUE_WAIT_MS: '20', TRELLIS_MAX_EVENT_LOOP_DELAY_MS: '0' };
    expect(loadConfig(env, 't').admission).toEqual({ maxConcurrent: 0, maxQueued: 5, maxQueueWaitMs: 20, maxEventLoopDelayMs: 0 });
    expect(loadConfig({}, 't').frontThread).toBe(true);
    expect(loadConfig({ TRELLIS_FRONT_THREAD: 'false' }, 't').frontThread).toBe(false);
    expect(() => loadConfig({ TRELLIS_MAX_QUEUE_WAIT_MS: '0', TRELLIS_MAX_CONCURRENT_REQUESTS: '-1' }, 't')).toThrow(/TRELLIS_MAX_QUEUE_WAIT_MS[\s\S]*TRELLIS_MAX_CONCURRENT_REQUESTS|TRELLIS_MAX_CONCURRENT_REQUESTS[\s\S]*TRELLIS_MAX_QUEUE_WAIT_MS/);
  });

  it('enables the OpenAI-compatible provider with a base URL or a key', () => {
    expect(loadConfig({ OPENAI_BASE_URL: 'http://localhost:11434/v1' }, 't').openai.enabled).toBe(true);
    expect(loadConfig({ OPENAI_API_KEY: 'sk-x' }, 't').openai).toMatchObject({ enabled: true, apiKey: 'sk-x' });
  });

  it('lists every problem at once', () => {
    try {
      loadConfig({ TRELLIS_GRPC_PORT: 'abc', TRELLIS_MAX_UPLOAD_BYTES: '-1', TRELLIS_LOG_LEVEL: 'loud', KAFKA_BROKERS: 'nohost', TRELLIS_API_KEYS: 'justakey' }, 't');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(6);
      expect(problems.join('\n')).toMatch(/TRELLIS_GRPC_PORT.*TRELLIS_MAX_UPLOAD_BYTES|TRELLIS_MAX_UPLOAD_BYTES.*TRELLIS_GRPC_PORT/s);
      expect(problems.join('\n')).toContain('TRELLIS_DB_URL is required in distributed mode');
    }
  });

  it('reads the parse budget and the URL fetch policy, and rejects allow-list entries that are not CIDRs, addresses or hosts', () => {
    expect(loadConfig({}, 't')).toMatchObject({ parseTimeoutMs: 60_000, maxDecompressedBytes: 200 * 1024 * 1024, urlFetchMaxRedirects: 5, urlFetchAllow: [] });
    const config = loadConfig({ TRELLIS_URL_FETCH_ALLOW: ' 10.0.0.0/8, fd00::/8,127.0.0.1 , Wiki.Intranet ', TRELLIS_PARSE_TIMEOUT_MS: '5000' }, 't');
    expect(config.urlFetchAllow).toEqual(['10.0.0.0/8', 'fd00::/8', '127.0.0.1', 'wiki.intranet']);
    expect(config.parseTimeoutMs).toBe(5000);
    for (const bad of ['10.0.0.0/33', '::1/129', 'http://host', '10.0.0.0/8/1', 'a b']) {
      expect(() => loadConfig({ TRELLIS_URL_FETCH_ALLOW: bad }, 't'), bad).toThrow(/TRELLIS_URL_FETCH_ALLOW entry/);
    }
  });

  it('configures a reranker and rejects an http one without a URL', () => {
    expect(loadConfig({}, 't').reranker.kind).toBe('none');
    expect(loadConfig({ TRELLIS_RERANKER: 'http', TRELLIS_RERANKER_URL: 'http://tei:8080' }, 't').reranker).toMatchObject({ kind: 'http', url: 'http://tei:8080' });
    expect(() => loadConfig({ TRELLIS_RERANKER: 'http' }, 't')).toThrow(/TRELLIS_RERANKER_URL/);
    expect(() => loadConfig({ TRELLIS_RERANKER: 'magic' }, 't')).toThrow(/none, local or http/);
  });

  it('reads the LLM retry and deployment-wide budget settings, 0 meaning unlimited', () => {
    expect(loadConfig({}, 't').openai).toMatchObject({ maxRetries: 3, maxConcurrency: 0, requestsPerMinute: 0, tokensPerMinute: 0 });
    const openai = loadConfig({ TRELLIS_LLM_MAX_RETRIES: '5', TRELLIS_LLM_MAX_CONCURRENCY: '8', TRELLIS_LLM_REQUESTS_PER_MINUTE: '500', TRELLIS_LLM_TOKENS_PER_MINUTE: '200000' }, 't').openai;
    expect(openai).toMatchObject({ maxRetries: 5, maxConcurrency: 8, requestsPerMinute: 500, tokensPerMinute: 200_000 });
    expect(() => loadConfig({ TRELLIS_LLM_MAX_CONCURRENCY: '-1' }, 't')).toThrow(/TRELLIS_LLM_MAX_CONCURRENCY/);
  });

  it('reads the entity resolution defaults and rejects values out of range', () => {
    expect(loadConfig({}, 't').resolution).toEqual({ mode: 'auto', similarityThreshold: 0.6, llmMergeDecisions: false, llmMergeFloor: 0.4, summaryMaxChars: 2000 });
    expect(loadConfig({ TRELLIS_RESOLUTION_MODE: 'embedding', TRELLIS_RESOLUTION_THRESHOLD: '0.85', TRELLIS_RESOLUTION_LLM_MERGE: 'true' }, 't').resolution).toMatchObject({
      mode: 'embedding',
      similarityThreshold: 0.85,
      llmMergeDecisions: true,
    });
    expect(() => loadConfig({ TRELLIS_RESOLUTION_MODE: 'fuzzy', TRELLIS_RESOLUTION_THRESHOLD: '1.5', TRELLIS_SUMMARY_MAX_CHARS: '10' }, 't')).toThrow(
      /TRELLIS_RESOLUTION_MODE[\s\S]*TRELLIS_RESOLUTION_THRESHOLD[\s\S]*TRELLIS_SUMMARY_MAX_CHARS|TRELLIS_RESOLUTION_THRESHOLD[\s\S]*TRELLIS_SUMMARY_MAX_CHARS/,
    );
    expect(() => loadConfig({ TRELLIS_RESOLUTION_THRESHOLD: '0.5', TRELLIS_RESOLUTION_LLM_MERGE_FLOOR: '0.7' }, 't')).toThrow(/must not exceed/);
  });

  it('maps API keys to tenants', () => {
    expect([...loadConfig({ TRELLIS_API_KEYS: 'k1=acme, k2=globex' }, 't').apiKeys]).toEqual([
      ['k1', 'acme'],
      ['k2', 'globex'],
    ]);
  });

  it('requires an internal token of a distributed deployment with API keys, and refuses a short one', () => {
    const distributed = { KAFKA_BROKERS: '127.0.0.1:9092', TRELLIS_DB_URL: 'mysql://root@127.0.0.1:4000/t', TRELLIS_API_KEYS: 'k1=acme' };
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env, 't');
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(problems(distributed)).toEqual([expect.stringMatching(/TRELLIS_API_KEYS is set but TRELLIS_INTERNAL_TOKEN is not/)]);
    expect(problems({ ...distributed, TRELLIS_INTERNAL_TOKEN: 'short' })).toEqual([expect.stringMatching(/TRELLIS_INTERNAL_TOKEN must be at least 16 characters/)]);
    expect(problems({ ...distributed, TRELLIS_INTERNAL_TOKEN: 'a'.repeat(32) })).toEqual([]);
    // One process: chat reaches retrieval in process, no token needed.
    expect(problems({ TRELLIS_API_KEYS: 'k1=acme' })).toEqual([]);
  });

  it('reads the chat history bounds and condensation timeout with their defaults, and rejects values out of range', () => {
    expect(loadConfig({}, 't').chat).toEqual({ historyTurns: 6, historyChars: 6000, condenseTimeoutMs: 10_000 });
    const env = { TRELLIS_CHAT_HISTORY_TURNS: '2', TRELLIS_CHAT_HISTORY_CHARS: '500', TRELLIS_CHAT_CONDENSE_TIMEOUT_MS: '250' };
    expect(loadConfig(env, 't').chat).toEqual({ historyTurns: 2, historyChars: 500, condenseTimeoutMs: 250 });
    expect(() => loadConfig({ TRELLIS_CHAT_HISTORY_TURNS: '11', TRELLIS_CHAT_HISTORY_CHARS: '40000' }, 't')).toThrow(/TRELLIS_CHAT_HISTORY_TURNS[\s\S]*TRELLIS_CHAT_HISTORY_CHARS/);
  });

  it('reads the sweeper settings with defaults, 0 turning it off, and rejects values out of range', () => {
    expect(loadConfig({}, 't').sweeper).toEqual({ intervalMs: 60_000, stuckAfterMs: 600_000, maxRedrives: 5 });
    expect(loadConfig({ TRELLIS_SWEEP_INTERVAL_MS: '0', TRELLIS_STUCK_AFTER_MS: '2000', TRELLIS_MAX_REDRIVES: '2' }, 't').sweeper).toEqual({ intervalMs: 0, stuckAfterMs: 2000, maxRedrives: 2 });
    expect(() => loadConfig({ TRELLIS_SWEEP_INTERVAL_MS: '-1', TRELLIS_STUCK_AFTER_MS: '5', TRELLIS_MAX_REDRIVES: '0' }, 't')).toThrow(
      /TRELLIS_SWEEP_INTERVAL_MS[\s\S]*TRELLIS_STUCK_AFTER_MS[\s\S]*TRELLIS_MAX_REDRIVES/,
    );
  });
});
