import type { KbSettings } from '@trellis/contracts';
import type { Models } from '@trellis/models';
import type { Extractor } from './extractor';
import { extractionModelName, extractionPrompt } from '@trellis/models';
import { JsonModeMemory, LlmExtractor } from './llm-extractor';
import { LocalExtractorPool } from './local/local-extractor-pool';

/** Distinct (model, prompt) pairs kept built; knowledge bases beyond share by rebuilding. */
const MAX_EXTRACTORS = 64;

/**
 * The extractor of each knowledge base: its own LLM model and prompt when an endpoint is
 * configured, the local extractor (in worker threads) otherwise. Built once per distinct
 * settings and reused.
 */
export class ExtractorRegistry {
  private readonly extractors = new Map<string, Extractor>();
  private readonly jsonMode = new JsonModeMemory();
  private readonly local = new LocalExtractorPool();

  constructor(private readonly models: Pick<Models, 'llm' | 'chatModel'>) {}

  forKnowledgeBase(settings: KbSettings): Extractor {
    if (this.models.llm === null) return this.local;
    const prompt = extractionPrompt(settings);
    const modelName = extractionModelName(settings, this.models.llm.model);
    const key = JSON.stringify([modelName, prompt.version, prompt.outputMode]);
    let extractor = this.extractors.get(key);
    if (extractor === undefined) {
      const llm = this.models.chatModel(modelName) ?? this.models.llm;
      extractor = new LlmExtractor(llm, prompt, this.jsonMode);
      if (this.extractors.size >= MAX_EXTRACTORS) this.extractors.delete(this.extractors.keys().next().value!);
      this.extractors.set(key, extractor);
    }
    return extractor;
  }

  /** Stops the local extractor's threads. */
  close(): Promise<void> {
    return this.local.close();
  }
}
