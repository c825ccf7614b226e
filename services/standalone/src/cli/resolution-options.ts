import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import type { v1 } from '@trellis/contracts';
import { integer } from './parsers';

/** The entity-resolution flags shared by `kb create` and `kb update`. */
export interface ResolutionFlags {
  resolution?: string;
  similarityThreshold?: number;
  llmMerge?: string;
  summaryMaxChars?: number;
}

function fraction(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new InvalidArgumentError('must be a number in (0, 1]');
  return n;
}

export function addResolutionOptions(command: Command): Command {
  return command
    .addOption(new Option('--resolution <mode>', 'entity resolution (default: embedding with an LLM, name without)').choices(['name', 'embedding']))
    .option('--similarity-threshold <cosine>', 'similarity at which a mention joins a same-name entity (default 0.6)', fraction)
    .addOption(new Option('--llm-merge <on|off>', 'ask the LLM about close same-name entities (default off)').choices(['on', 'off']))
    .option('--summary-max-chars <n>', 'longest summary before the LLM condenses it (default 2000)', integer(200, 100_000));
}

export function hasResolutionFlags(flags: ResolutionFlags): boolean {
  return [flags.resolution, flags.similarityThreshold, flags.llmMerge, flags.summaryMaxChars].some((v) => v !== undefined);
}

/** The settings to send: `current` with the flags given applied on top. */
export function resolutionSettings(flags: ResolutionFlags, current?: v1.ResolutionSettings): v1.ResolutionSettings {
  return {
    mode: flags.resolution ?? current?.mode ?? '',
    similarityThreshold: flags.similarityThreshold ?? current?.similarityThreshold ?? 0,
    llmMergeDecisions: flags.llmMerge ?? current?.llmMergeDecisions ?? '',
    llmMergeFloor: current?.llmMergeFloor ?? 0,
    summaryMaxChars: flags.summaryMaxChars ?? current?.summaryMaxChars ?? 0,
  };
}
