import type { LlmSpend } from '@trellis/storage';

/**
 * Extraction calls a knowledge base must have made before its own output length and summary
 * rate replace the server defaults: fewer say more about the chunk than about the model.
 */
export const MIN_CALIBRATION_CALLS = 20;

/**
 * Summary work per extraction call for a knowledge base without its own measure: 6.4 summary
 * calls per 100 extraction calls, 545 input and 78 output tokens each (hotpotqa-100 with the
 * default resolution settings; docs/benchmarks.md, "LLM extraction cost per chunk").
 */
const DEFAULT_SUMMARY_RATE = { callsPerExtraction: 0.064, inputPerExtraction: 0.064 * 545, outputPerExtraction: 0.064 * 78 };

/**
 * How the provider counts a prompt against how Trellis counts it (cl100k plus per-message
 * overhead), from this knowledge base's extraction calls: 1 until there are enough of them.
 * Providers with other tokenizers (or a stand-in that counts characters) differ by 10-30 %.
 */
export function inputScaleOf(extraction: LlmSpend): number {
  if (extraction.calls < MIN_CALIBRATION_CALLS || extraction.countedInputTokens <= 0) return 1;
  return extraction.inputTokens / extraction.countedInputTokens;
}

export interface OutputRatio {
  /** Output tokens expected per input token of an extraction call. */
  readonly outputPerInput: number;
  /** Where the ratio came from, for the estimate's reader. */
  readonly basis: string;
}

/** The output ratio of the knowledge base's own extraction calls, or the server default. */
export function outputRatioOf(extraction: LlmSpend, defaultPercent: number): OutputRatio {
  if (extraction.calls >= MIN_CALIBRATION_CALLS && extraction.inputTokens > 0) {
    const outputPerInput = extraction.outputTokens / extraction.inputTokens;
    return { outputPerInput, basis: `measured on this knowledge base's ${extraction.calls} extraction calls: ${outputPerInput.toFixed(2)} output tokens per input token` };
  }
  return {
    outputPerInput: defaultPercent / 100,
    basis: `server default (TRELLIS_ESTIMATE_OUTPUT_PERCENT=${defaultPercent}): ${(defaultPercent / 100).toFixed(2)} output tokens per input token; the knowledge base has ${extraction.calls} of the ${MIN_CALIBRATION_CALLS} extraction calls needed to measure its own`,
  };
}

/** Summary calls and tokens per extraction call: the knowledge base's own, or the default. */
export function summaryRateOf(extraction: LlmSpend, summary: LlmSpend): { callsPerExtraction: number; inputPerExtraction: number; outputPerExtraction: number } {
  if (extraction.calls < MIN_CALIBRATION_CALLS) return DEFAULT_SUMMARY_RATE;
  return {
    callsPerExtraction: summary.calls / extraction.calls,
    inputPerExtraction: summary.inputTokens / extraction.calls,
    outputPerExtraction: summary.outputTokens / extraction.calls,
  };
}
