import { EXTRACTION_SCHEMA, GLEANING_PROMPT, countPromptTokens, extractionMessages, isRejectedRequest } from '@trellis/models';
import type { CallPriority, ChatMessage, ChatModel, CompletionOptions, ExtractionPrompt } from '@trellis/models';
import type { ExtractionResult } from '@trellis/storage';
import type { Extractor } from './extractor';
import { ExtractionReport } from './extraction-report';
import { parseJsonLoosely, validateExtraction } from './extraction-validation';

/**
 * Models whose provider refused `json_schema` output, learnt at run time: they get JSON mode
 * from then on, in this process, without trying the schema again.
 */
export class JsonModeMemory {
  private readonly models = new Set<string>();

  needsJsonMode(model: string): boolean {
    return this.models.has(model);
  }

  remember(model: string): void {
    this.models.add(model);
  }
}

/**
 * One structured-output call per chunk through any OpenAI-compatible model (plus one
 * gleaning turn when the knowledge base asks for it), validated item by item.
 */
export class LlmExtractor implements Extractor {
  readonly usesLlm = true;

  constructor(
    private readonly llm: ChatModel,
    private readonly prompt: ExtractionPrompt,
    private readonly jsonMode = new JsonModeMemory(),
  ) {}

  get model(): string {
    return this.llm.model;
  }

  get promptVersion(): string {
    return this.prompt.version;
  }

  async extract(text: string, context: { heading: string }, report = new ExtractionReport()): Promise<ExtractionResult> {
    const messages = extractionMessages(this.prompt, text, context.heading);
    // A chunk's first call is new work; its gleaning turn finishes work under way.
    const first = await this.ask(messages, report, 'bulk');
    const replies = [parseJsonLoosely(first, report)];
    if (this.prompt.gleaningPasses > 0) {
      const more = await this.ask([...messages, { role: 'assistant', content: first }, { role: 'user', content: GLEANING_PROMPT }], report, 'follow-up');
      replies.push(parseJsonLoosely(more, report));
    }
    return validateExtraction(merge(replies), { entityTypes: this.prompt.entityTypes }, report);
  }

  /** One call, with the output mode the settings and the model allow. */
  private async ask(messages: readonly ChatMessage[], report: ExtractionReport, priority: CallPriority): Promise<string> {
    const mode = this.prompt.outputMode;
    const useSchema = mode === 'json_schema' || (mode === 'auto' && !this.jsonMode.needsJsonMode(this.model));
    try {
      return await this.call(messages, useSchema, report, priority);
    } catch (error) {
      if (!(mode === 'auto' && useSchema && isRejectedRequest(error))) throw error;
      this.jsonMode.remember(this.model);
      return this.call(messages, false, report, priority);
    }
  }

  private async call(messages: readonly ChatMessage[], useSchema: boolean, report: ExtractionReport, priority: CallPriority): Promise<string> {
    let usage: { inputTokens: number; outputTokens: number } | undefined;
    const options: CompletionOptions = {
      temperature: 0,
      ...(useSchema ? { jsonSchema: { name: 'knowledge_graph', schema: EXTRACTION_SCHEMA } } : { jsonObject: true }),
      onUsage: (u) => (usage = u),
      priority,
    };
    const reply = await this.llm.complete(messages, options);
    report.addCall(usage, countPromptTokens(messages));
    return reply;
  }
}

/** Concatenates the lists of several replies; validation then drops what repeats. */
function merge(replies: readonly unknown[]): { entities: unknown[]; relationships: unknown[] } | undefined {
  const objects = replies.filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null && !Array.isArray(r));
  if (objects.length === 0) return undefined;
  const list = (key: string) => objects.flatMap((o) => (Array.isArray(o[key]) ? (o[key] as unknown[]) : []));
  return { entities: list('entities'), relationships: list('relationships') };
}
