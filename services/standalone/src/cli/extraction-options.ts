import { readFileSync } from 'node:fs';
import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import type { v1 } from '@trellis/contracts';

/** The extraction flags shared by `kb create` and `kb update`. */
export interface ExtractionFlags {
  llmModel?: string;
  entityTypes?: string[];
  instructions?: string;
  instructionsFile?: string;
  examplesFile?: string;
  gleaning?: number;
  outputMode?: string;
}

export function addExtractionOptions(command: Command): Command {
  return command
    .option('--llm-model <model>', 'chat model for this knowledge base (default: TRELLIS_LLM_MODEL)')
    .option('--entity-types <types>', 'comma-separated entity types the extractor should use (e.g. person,drug,trial)', (v: string) =>
      v.split(',').map((t) => t.trim()).filter((t) => t !== ''),
    )
    .option('--instructions <text>', 'extra extraction instructions added to the prompt')
    .option('--instructions-file <path>', 'read the extraction instructions from a file')
    .option('--examples-file <path>', 'worked extraction examples (text and expected JSON) to show the model')
    .addOption(
      new Option('--gleaning <passes>', 'second extraction turn asking for what the first missed (0 or 1)').argParser((v: string) => {
        if (v !== '0' && v !== '1') throw new InvalidArgumentError('must be 0 or 1');
        return Number(v);
      }),
    )
    .addOption(new Option('--output-mode <mode>', 'how the model is asked for JSON (default auto)').choices(['auto', 'json_schema', 'json_object']));
}

export function hasExtractionFlags(flags: ExtractionFlags): boolean {
  return [flags.entityTypes, flags.instructions, flags.instructionsFile, flags.examplesFile, flags.gleaning, flags.outputMode].some((v) => v !== undefined);
}

/** The settings to send: `current` with the flags given applied on top. */
export function extractionSettings(flags: ExtractionFlags, current?: v1.ExtractionSettings): v1.ExtractionSettings {
  return {
    entityTypes: flags.entityTypes ?? current?.entityTypes ?? [],
    instructions: flags.instructionsFile !== undefined ? readFileSync(flags.instructionsFile, 'utf8') : (flags.instructions ?? current?.instructions ?? ''),
    examples: flags.examplesFile !== undefined ? readFileSync(flags.examplesFile, 'utf8') : (current?.examples ?? ''),
    gleaningPasses: flags.gleaning ?? current?.gleaningPasses ?? 0,
    outputMode: flags.outputMode ?? current?.outputMode ?? 'auto',
  };
}

/** "3 calls · 5.1k in / 1.2k out · $0.0021 · 2 cached" */
export function usageSummary(usage: v1.LlmUsage | undefined): string {
  if (usage === undefined || (usage.calls === 0 && usage.cacheHits === 0)) return '-';
  const k = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));
  const parts = [`${usage.calls} calls`, `${k(usage.inputTokens)} in / ${k(usage.outputTokens)} out`];
  if (usage.estimatedCostUsd > 0) parts.push(`$${usage.estimatedCostUsd.toFixed(4)}`);
  if (usage.cacheHits > 0) parts.push(`${usage.cacheHits} cached`);
  return parts.join(' · ');
}
