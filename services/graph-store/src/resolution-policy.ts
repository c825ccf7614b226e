import type { ResolutionSettings } from '@trellis/contracts';
import type { ResolutionDefaults } from '@trellis/config';
import type { ResolutionPolicy } from './entity-resolver';

/** A knowledge base's resolution and summary settings with the server's defaults filled in. */
export interface GraphPolicy extends ResolutionPolicy {
  summaryMaxChars: number;
}

/**
 * Fills the KB's unset fields from the server defaults. `auto` means embedding resolution when
 * an LLM extracts (its descriptions are worth comparing) and name-only resolution with the
 * local rule-based extractor.
 */
export function graphPolicy(settings: ResolutionSettings | undefined, defaults: ResolutionDefaults, llmConfigured: boolean): GraphPolicy {
  const serverMode = defaults.mode === 'auto' ? (llmConfigured ? 'embedding' : 'name') : defaults.mode;
  const threshold = settings?.similarityThreshold || defaults.similarityThreshold;
  return {
    mode: settings?.mode || serverMode,
    similarityThreshold: threshold,
    llmMergeDecisions: settings?.llmMergeDecisions === 'on' || (settings?.llmMergeDecisions !== 'off' && defaults.llmMergeDecisions),
    llmMergeFloor: Math.min(settings?.llmMergeFloor || defaults.llmMergeFloor, threshold),
    summaryMaxChars: settings?.summaryMaxChars || defaults.summaryMaxChars,
  };
}
