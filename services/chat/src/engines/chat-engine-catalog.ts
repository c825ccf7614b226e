import { TrellisError } from '@trellis/contracts';
import type { TenantScope, v1 } from '@trellis/contracts';
import type { ChatEngineRecord, ChatEngineRepository, ChatEngineSettings, KnowledgeBaseRepository } from '@trellis/storage';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const MAX_DESCRIPTION_CHARS = 2000;
const MAX_KNOWLEDGE_BASES = 10;
export const MAX_PROMPT_CHARS = 8000;
const MODES = ['hybrid', 'vector', 'fulltext', 'graph'];
const STRATEGIES = ['ppr', 'weighted'];
const SCOPES = ['local', 'global', 'auto'];
const MAX_TOP_K = 50;
const MAX_DEPTH = 4;
const PROMPTS = ['systemPrompt', 'refinePrompt', 'condensePrompt', 'answerPrompt'] as const;
const PROMPT_FIELDS: Record<(typeof PROMPTS)[number], string> = {
  systemPrompt: 'system_prompt',
  refinePrompt: 'refine_prompt',
  condensePrompt: 'condense_prompt',
  answerPrompt: 'answer_prompt',
};

/**
 * Chat engines of a tenant (named chat configurations, as AutoFlow has them): validated, stored,
 * and looked up by the chat turn that names one. Its knowledge bases must exist when the engine
 * is written; a turn resolves them again (a deleted one is then not found).
 */
export class ChatEngineCatalog {
  constructor(private readonly repos: { readonly chatEngines: ChatEngineRepository; readonly knowledgeBases: Pick<KnowledgeBaseRepository, 'findKnowledgeBase'> }) {}

  async create(tenant: TenantScope, engine: v1.ChatEngine | null | undefined): Promise<v1.ChatEngine> {
    const valid = await this.validated(tenant, engine);
    return toMessage(await this.repos.chatEngines.createChatEngine(tenant, valid));
  }

  async get(tenant: TenantScope, name: string): Promise<v1.ChatEngine> {
    return toMessage(await this.find(tenant, name));
  }

  async list(tenant: TenantScope): Promise<v1.ListChatEnginesResponse> {
    return { engines: (await this.repos.chatEngines.listChatEngines(tenant)).map(toMessage) };
  }

  async update(tenant: TenantScope, name: string, engine: v1.ChatEngine | null | undefined): Promise<v1.ChatEngine> {
    validName(name);
    // A message field the request leaves out arrives as null from the gRPC loader.
    if (engine && engine.name !== '' && engine.name !== name) throw TrellisError.invalid(`engine.name "${engine.name.slice(0, 80)}" differs from name "${name}": chat engines are not renamed`);
    const valid = await this.validated(tenant, engine && { ...engine, name });
    const updated = await this.repos.chatEngines.updateChatEngine(tenant, valid.name, valid);
    if (updated === null) throw notFound(valid.name);
    return toMessage(updated);
  }

  async delete(tenant: TenantScope, name: string): Promise<v1.DeleteChatEngineResponse> {
    validName(name);
    if (!(await this.repos.chatEngines.deleteChatEngine(tenant, name))) throw notFound(name);
    return { deleted: true };
  }

  /** The settings a chat turn that names the engine runs with; NOT_FOUND for an unknown name. */
  async settingsFor(tenant: TenantScope, name: string): Promise<ChatEngineSettings & { name: string }> {
    return { ...(await this.find(tenant, name)).settings, name };
  }

  private async find(tenant: TenantScope, name: string): Promise<ChatEngineRecord> {
    validName(name);
    const engine = await this.repos.chatEngines.getChatEngine(tenant, name);
    if (engine === null) throw notFound(name);
    return engine;
  }

  private async validated(tenant: TenantScope, engine: v1.ChatEngine | null | undefined): Promise<{ name: string; description: string; settings: ChatEngineSettings }> {
    if (!engine) throw TrellisError.invalid('engine is missing');
    validName(engine.name);
    if (engine.description.length > MAX_DESCRIPTION_CHARS) throw TrellisError.invalid(`description is longer than ${MAX_DESCRIPTION_CHARS} characters`);
    if (engine.knowledgeBases.length > MAX_KNOWLEDGE_BASES) throw TrellisError.invalid(`a chat engine has at most ${MAX_KNOWLEDGE_BASES} knowledge bases`);
    for (const kb of engine.knowledgeBases) {
      if (kb.trim() === '') throw TrellisError.invalid('knowledge_bases has an empty entry');
      if ((await this.repos.knowledgeBases.findKnowledgeBase(tenant, kb)) === null) throw TrellisError.notFound(`knowledge base "${kb}" not found`);
    }
    oneOf('mode', engine.mode, MODES);
    oneOf('strategy', engine.strategy, STRATEGIES);
    oneOf('scope', engine.scope, SCOPES);
    if (engine.topK > MAX_TOP_K) throw TrellisError.invalid(`top_k must be at most ${MAX_TOP_K}`);
    if (engine.depth > MAX_DEPTH) throw TrellisError.invalid(`depth must be at most ${MAX_DEPTH}`);
    for (const prompt of PROMPTS) {
      if (engine[prompt].length > MAX_PROMPT_CHARS) throw TrellisError.invalid(`${PROMPT_FIELDS[prompt]} is longer than ${MAX_PROMPT_CHARS} characters`);
    }
    return {
      name: engine.name,
      description: engine.description,
      settings: {
        knowledgeBases: [...new Set(engine.knowledgeBases)],
        mode: engine.mode,
        topK: engine.topK,
        depth: engine.depth,
        strategy: engine.strategy,
        scope: engine.scope,
        systemPrompt: engine.systemPrompt,
        refinePrompt: engine.refinePrompt,
        condensePrompt: engine.condensePrompt,
        answerPrompt: engine.answerPrompt,
        showGraphContext: engine.showGraphContext,
        noRerank: engine.noRerank,
      },
    };
  }
}

function validName(name: string): void {
  if (name === '') throw TrellisError.invalid('chat engine name is empty');
  if (!NAME.test(name)) throw TrellisError.invalid(`chat engine name "${name.slice(0, 80)}" is invalid: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
}

function oneOf(field: string, value: string, allowed: readonly string[]): void {
  if (value !== '' && !allowed.includes(value)) throw TrellisError.invalid(`unknown ${field} "${value.slice(0, 80)}": use one of ${allowed.join(', ')}`);
}

function notFound(name: string): TrellisError {
  return TrellisError.notFound(`chat engine "${name}" not found`);
}

function toMessage(engine: ChatEngineRecord): v1.ChatEngine {
  const { settings } = engine;
  return { name: engine.name, description: engine.description, ...settings, noRerank: settings.noRerank ?? false, createdAt: engine.createdAt, updatedAt: engine.updatedAt };
}
