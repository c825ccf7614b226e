interface Encoder {
  encode(text: string): number[];
}

// js-tiktoken declares ESM-only types although it ships CommonJS builds; load the CJS build.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Tiktoken } = require('js-tiktoken/lite') as { Tiktoken: new (ranks: unknown) => Encoder };

let encoder: Encoder | undefined;

/** The cl100k tokenizer, shipped inside the npm package (no download). */
function tokenizer(): Encoder {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  encoder ??= new Tiktoken(require('js-tiktoken/ranks/cl100k_base'));
  return encoder;
}

/** Number of cl100k tokens in `text`: what chunk sizes and LLM budgets are measured in. */
export function countTokens(text: string): number {
  if (text === '') return 0;
  return tokenizer().encode(text).length;
}
