import type { EnvReader } from './env-reader';

/** Server defaults of the per-knowledge-base entity resolution settings. */
export interface ResolutionDefaults {
  /**
   * TRELLIS_RESOLUTION_MODE: `name` (same normalised name, same entity), `embedding` (same
   * name and description embeddings within the threshold) or `auto` (default): `embedding`
   * when an LLM extracts, `name` with the local extractor, whose template descriptions and
   * hash embeddings are too crude to tell same-name entities apart.
   */
  readonly mode: 'auto' | 'name' | 'embedding';
  /** TRELLIS_RESOLUTION_THRESHOLD: cosine similarity at or above which a mention joins a same-name entity. Default 0.6. */
  readonly similarityThreshold: number;
  /** TRELLIS_RESOLUTION_LLM_MERGE: `true` asks the LLM about same-name entities in the close band. Default false. */
  readonly llmMergeDecisions: boolean;
  /** TRELLIS_RESOLUTION_LLM_MERGE_FLOOR: lower end of that band. Default 0.4. */
  readonly llmMergeFloor: number;
  /** TRELLIS_SUMMARY_MAX_CHARS: summaries longer than this are summarised by the LLM (truncated without one). Default 2000. */
  readonly summaryMaxChars: number;
}

export function readResolutionDefaults(env: EnvReader): ResolutionDefaults {
  const resolution: ResolutionDefaults = {
    mode: env.choice<ResolutionDefaults['mode']>('TRELLIS_RESOLUTION_MODE', ['auto', 'name', 'embedding'], 'auto'),
    similarityThreshold: env.fraction('TRELLIS_RESOLUTION_THRESHOLD', 0.6),
    llmMergeDecisions: env.flag('TRELLIS_RESOLUTION_LLM_MERGE', false),
    llmMergeFloor: env.fraction('TRELLIS_RESOLUTION_LLM_MERGE_FLOOR', 0.4),
    summaryMaxChars: env.int('TRELLIS_SUMMARY_MAX_CHARS', 2000, 200, 100_000),
  };
  if (resolution.llmMergeFloor > resolution.similarityThreshold) {
    env.problems.push('TRELLIS_RESOLUTION_LLM_MERGE_FLOOR must not exceed TRELLIS_RESOLUTION_THRESHOLD');
  }
  return resolution;
}
