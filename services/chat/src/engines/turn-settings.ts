import { TrellisError } from '@trellis/contracts';
import type { v1 } from '@trellis/contracts';
import type { ChatEngineSettings } from '@trellis/storage';

const DEFAULT_SOURCES = 5;

/** The prompts a turn's language-model calls use; empty means the built-in one. */
export interface TurnPrompts {
  readonly system: string;
  readonly refine: string;
  readonly condense: string;
  readonly answer: string;
}

/** What one chat turn runs with: the request's fields, else its chat engine's, else the defaults. */
export interface TurnSettings {
  readonly knowledgeBase: string;
  readonly topK: number;
  readonly mode: string;
  readonly depth: number;
  readonly strategy: string;
  readonly scope: string;
  readonly prompts: TurnPrompts;
  readonly showGraphContext: boolean;
  /** False when the engine leaves the deployment's reranker out. */
  readonly rerank: boolean;
  /** The engine's name, '' for none. */
  readonly engine: string;
}

/**
 * The request over the engine: a field the request sets wins (knowledge base, top_k, scope); the
 * engine supplies the rest (retrieval mode, depth, strategy, reranking, prompts, graph context). The engine's
 * first knowledge base is the default; a request naming one outside its list is refused.
 * `fallbackKnowledgeBase` is a continued conversation's.
 */
export function turnSettings(request: v1.ChatRequest, engine: (ChatEngineSettings & { name: string }) | null, fallbackKnowledgeBase = ''): TurnSettings {
  const named = request.knowledgeBase;
  if (engine !== null && named !== '' && engine.knowledgeBases.length > 0 && !engine.knowledgeBases.includes(named)) {
    throw TrellisError.invalid(`knowledge base "${named}" is not one of chat engine "${engine.name}"'s (${engine.knowledgeBases.join(', ')})`);
  }
  const knowledgeBase = named || fallbackKnowledgeBase || (engine?.knowledgeBases[0] ?? '');
  if (knowledgeBase === '') throw TrellisError.invalid('knowledge_base is empty');
  return {
    knowledgeBase,
    topK: request.topK || engine?.topK || DEFAULT_SOURCES,
    mode: engine?.mode || 'hybrid',
    depth: engine?.depth ?? 0,
    strategy: engine?.strategy ?? '',
    scope: request.scope || (engine?.scope ?? ''),
    prompts: {
      system: engine?.systemPrompt ?? '',
      refine: engine?.refinePrompt ?? '',
      condense: engine?.condensePrompt ?? '',
      answer: engine?.answerPrompt ?? '',
    },
    showGraphContext: engine?.showGraphContext ?? false,
    rerank: engine?.noRerank !== true,
    engine: engine?.name ?? '',
  };
}
