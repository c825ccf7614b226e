/** Injection token of the process's price table (TRELLIS_LLM_PRICES over the defaults). */
export const LLM_PRICES = Symbol.for('trellis.llm-prices');

/** US dollars per million tokens. */
export interface LlmPrice {
  readonly input: number;
  readonly output: number;
}

export type LlmPriceTable = ReadonlyMap<string, LlmPrice>;

/**
 * List prices of common OpenAI models (USD per million tokens, input/output). Estimates only:
 * override or extend them with `TRELLIS_LLM_PRICES`; unknown models cost 0 (local models).
 */
export const DEFAULT_LLM_PRICES: LlmPriceTable = new Map<string, LlmPrice>([
  ['gpt-4o-mini', { input: 0.15, output: 0.6 }],
  ['gpt-4o', { input: 2.5, output: 10 }],
  ['gpt-4.1', { input: 2, output: 8 }],
  ['gpt-4.1-mini', { input: 0.4, output: 1.6 }],
  ['gpt-4.1-nano', { input: 0.1, output: 0.4 }],
  ['text-embedding-3-small', { input: 0.02, output: 0 }],
  ['text-embedding-3-large', { input: 0.13, output: 0 }],
  ['text-embedding-ada-002', { input: 0.1, output: 0 }],
]);

/**
 * `TRELLIS_LLM_PRICES`: `model=input:output,...` in USD per million tokens, e.g.
 * `gpt-4o-mini=0.15:0.6,llama3.1=0:0`; entries override the defaults. Malformed entries
 * throw, so a typo stops start-up instead of silently costing nothing.
 */
export function parseLlmPrices(spec: string | undefined): LlmPriceTable {
  const table = new Map(DEFAULT_LLM_PRICES);
  for (const entry of (spec ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const match = /^([^=\s]+)\s*=\s*([0-9.]+)\s*:\s*([0-9.]+)$/.exec(entry);
    const input = Number(match?.[2]);
    const output = Number(match?.[3]);
    if (!match || !Number.isFinite(input) || !Number.isFinite(output)) {
      throw new Error(`TRELLIS_LLM_PRICES: "${entry}" is not model=input:output (USD per million tokens)`);
    }
    table.set(match[1]!, { input, output });
  }
  return table;
}

/** Estimated cost in USD of one call; 0 for models without a price. */
export function estimateCost(prices: LlmPriceTable, model: string, inputTokens: number, outputTokens: number): number {
  const price = prices.get(model);
  if (price === undefined) return 0;
  return (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
}
