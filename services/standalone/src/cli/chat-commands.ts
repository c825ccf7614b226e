import { readFileSync } from 'node:fs';
import { Option } from 'commander';
import type { Command } from 'commander';
import type { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { table } from './output';
import { integer } from './parsers';

type Run = (action: (client: TrellisClient, ...args: never[]) => Promise<number | void>) => (...args: unknown[]) => Promise<void>;

const out = process.stdout;

/** The flags of `engines create` and `engines update`; a flag left out keeps the value (update) or the default (create). */
interface EngineFlags {
  description?: string;
  kb?: string[];
  mode?: string;
  topK?: number;
  depth?: number;
  strategy?: string;
  scope?: string;
  systemPrompt?: string;
  refinePrompt?: string;
  condensePrompt?: string;
  answerPrompt?: string;
  showGraph?: boolean;
  rerank?: boolean;
  json?: boolean;
}

/** A prompt flag's text, or the file's with `@path`. */
function promptText(value: string): string {
  return value.startsWith('@') ? readFileSync(value.slice(1), 'utf8') : value;
}

function withEngineFlags(command: Command): Command {
  return command
    .option('--description <text>', 'what the engine is for')
    .option('--kb <kb>', 'a knowledge base it may search (repeat; the first is the default)', (v: string, all: string[] = []) => [...all, v])
    .addOption(new Option('--mode <mode>', 'chunk retrieval mode').choices(['hybrid', 'vector', 'fulltext', 'graph']))
    .option('--top-k <n>', 'sources per answer', integer(1, 50))
    .option('--depth <n>', 'hops of the weighted graph walk', integer(1, 4))
    .addOption(new Option('--strategy <strategy>', 'graph retrieval strategy').choices(['ppr', 'weighted']))
    .addOption(new Option('--scope <scope>', 'local, global or auto').choices(['local', 'global', 'auto']))
    .option('--system-prompt <text>', "the answer model's system message (@file reads a file)")
    .option('--refine-prompt <text>', "the model's question refinement instructions (@file reads a file)")
    .option('--condense-prompt <text>', "the model's follow-up condensation instructions (@file reads a file)")
    .option('--answer-prompt <text>', 'added after the question for the answer model (@file reads a file)')
    .option('--show-graph', 'answers carry the graph context retrieval found')
    .option('--no-show-graph', 'answers carry no graph context')
    .option('--rerank', "use the deployment's reranker (TRELLIS_RERANKER), the default")
    .option('--no-rerank', "leave the deployment's reranker out")
    .option('--json', 'print JSON');
}

/** The engine with the flags given applied over `base`. */
function engineFrom(name: string, base: Partial<v1.ChatEngine>, flags: EngineFlags): Partial<v1.ChatEngine> {
  const engine: Partial<v1.ChatEngine> = { ...base, name };
  if (flags.description !== undefined) engine.description = flags.description;
  if (flags.kb !== undefined) engine.knowledgeBases = flags.kb;
  if (flags.mode !== undefined) engine.mode = flags.mode;
  if (flags.topK !== undefined) engine.topK = flags.topK;
  if (flags.depth !== undefined) engine.depth = flags.depth;
  if (flags.strategy !== undefined) engine.strategy = flags.strategy;
  if (flags.scope !== undefined) engine.scope = flags.scope;
  if (flags.systemPrompt !== undefined) engine.systemPrompt = promptText(flags.systemPrompt);
  if (flags.refinePrompt !== undefined) engine.refinePrompt = promptText(flags.refinePrompt);
  if (flags.condensePrompt !== undefined) engine.condensePrompt = promptText(flags.condensePrompt);
  if (flags.answerPrompt !== undefined) engine.answerPrompt = promptText(flags.answerPrompt);
  if (flags.showGraph !== undefined) engine.showGraphContext = flags.showGraph;
  if (flags.rerank !== undefined) engine.noRerank = !flags.rerank;
  return engine;
}

function describeEngine(e: v1.ChatEngine): string {
  const prompt = (label: string, text: string) => (text ? `  ${label}: ${text.length > 100 ? `${text.slice(0, 99)}…` : text}\n` : '');
  return (
    `${e.name}${e.description ? ` — ${e.description}` : ''}\n` +
    `  knowledge bases: ${e.knowledgeBases.join(', ') || '(the request names one)'}\n` +
    `  retrieval: mode ${e.mode || 'hybrid'}, top_k ${e.topK || 'default'}, depth ${e.depth || 'default'}, strategy ${e.strategy || 'default'}, scope ${e.scope || 'local'}\n` +
    `  graph context shown: ${e.showGraphContext ? 'yes' : 'no'}; reranker: ${e.noRerank ? 'left out' : "the deployment's, when configured"}\n` +
    prompt('system prompt', e.systemPrompt) +
    prompt('refine prompt', e.refinePrompt) +
    prompt('condense prompt', e.condensePrompt) +
    prompt('answer prompt', e.answerPrompt)
  );
}

/**
 * `trellis chats`: saved conversations (list, `show`, `delete`); `trellis engines`: chat engines
 * (list, `show`, `create`, `update`, `delete`).
 */
export function addChatCommands(program: Command, run: Run): void {
  const chats = program
    .command('chats')
    .description('saved conversations, newest first')
    .option('--kb <kb>', 'only those of this knowledge base')
    .option('--json', 'print JSON')
    .action(
      run(async (client, opts: { kb?: string; json?: boolean }) => {
        const all: v1.ChatSummary[] = [];
        let pageToken = '';
        do {
          const page = await client.listChats({ knowledgeBase: opts.kb ?? '', pageToken });
          all.push(...page.chats);
          pageToken = page.nextPageToken;
        } while (pageToken !== '');
        if (opts.json) return void out.write(`${JSON.stringify(all, null, 2)}\n`);
        if (all.length === 0) return void out.write('no conversations\n');
        out.write(`${table([['ID', 'MESSAGES', 'ENGINE', 'UPDATED', 'TITLE'], ...all.map((c) => [c.id, String(c.messageCount), c.engine, c.updatedAt, c.title])])}\n`);
      }),
    );
  chats
    .command('show <chat-id>')
    .description('a conversation: its questions (and how they were condensed), answers and sources')
    .option('--json', 'print JSON')
    .action(
      run(async (client, chatId: string, opts: { json?: boolean }) => {
        const detail = await client.getChat(chatId);
        if (opts.json) return void out.write(`${JSON.stringify(detail, null, 2)}\n`);
        const c = detail.chat!;
        out.write(`${c.id} (knowledge base ${c.knowledgeBaseId}${c.engine ? `, engine ${c.engine}` : ''}), started ${c.createdAt}\n`);
        for (const m of detail.messages) {
          if (m.role === 'user') out.write(`\nQ: ${m.content}\n${m.condensedQuestion ? `   (condensed: ${m.condensedQuestion})\n` : ''}`);
          else out.write(`A: ${m.content}\n${m.citations.map((s) => `   [${s.index}] ${s.sourceUri}\n`).join('')}`);
        }
      }),
    );
  chats
    .command('delete <chat-id>')
    .description('delete a conversation and its messages')
    .action(
      run(async (client, chatId: string) => {
        await client.deleteChat(chatId);
        out.write(`deleted ${chatId}\n`);
      }),
    );

  const engines = program
    .command('engines')
    .description('chat engines: named chat configurations that `ask --engine` and Chat/Ask requests select')
    .option('--json', 'print JSON')
    .action(
      run(async (client, opts: { json?: boolean }) => {
        const { engines: list } = await client.listChatEngines();
        if (opts.json) return void out.write(`${JSON.stringify(list, null, 2)}\n`);
        if (list.length === 0) return void out.write('no chat engines: create one with `trellis engines create <name> --kb <kb>`\n');
        const rows = list.map((e) => [e.name, e.knowledgeBases.join(','), e.mode || 'hybrid', String(e.topK || ''), e.showGraphContext ? 'yes' : '', e.description]);
        out.write(`${table([['NAME', 'KNOWLEDGE BASES', 'MODE', 'TOP K', 'GRAPH', 'DESCRIPTION'], ...rows])}\n`);
      }),
    );
  engines
    .command('show <name>')
    .description('one chat engine with its prompts')
    .option('--json', 'print JSON')
    .action(
      run(async (client, name: string, opts: { json?: boolean }) => {
        const engine = await client.getChatEngine(name);
        out.write(opts.json ? `${JSON.stringify(engine, null, 2)}\n` : describeEngine(engine));
      }),
    );
  withEngineFlags(engines.command('create <name>').description('create a chat engine')).action(
    run(async (client, name: string, flags: EngineFlags) => {
      const engine = await client.createChatEngine(engineFrom(name, {}, flags));
      out.write(flags.json ? `${JSON.stringify(engine, null, 2)}\n` : `created ${describeEngine(engine)}`);
    }),
  );
  withEngineFlags(engines.command('update <name>').description("change a chat engine's settings (flags left out keep their value)")).action(
    run(async (client, name: string, flags: EngineFlags) => {
      const { createdAt: _created, updatedAt: _updated, ...current } = await client.getChatEngine(name);
      const engine = await client.updateChatEngine(name, engineFrom(name, current, flags));
      out.write(flags.json ? `${JSON.stringify(engine, null, 2)}\n` : `updated ${describeEngine(engine)}`);
    }),
  );
  engines
    .command('delete <name>')
    .description('delete a chat engine (conversations it ran keep their messages)')
    .action(
      run(async (client, name: string) => {
        await client.deleteChatEngine(name);
        out.write(`deleted chat engine ${name}\n`);
      }),
    );
}
