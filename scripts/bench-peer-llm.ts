// The fake model bench:peer points both systems at: a real OpenAI-compatible HTTP server
// (FakeOpenAiServer) that tells each request's purpose from its prompt, answers it in the
// format the asking system expects, after a fixed latency, and counts the calls; and a built
// standalone server pointed at it.
import type { ChildProcess } from 'node:child_process';
import { TrellisClient } from '@trellis/client';
import { FakeOpenAiServer, fakeProviderEnv } from '@trellis/testing';
import type { ScriptedReply } from '@trellis/testing';
import { graphJson, graphRecords } from '@trellis/testing';
import { startBuiltServer } from './bench-kit.mjs';

type Message = { role: string; content: string };

export const PURPOSES = [
  'trellis extraction',
  'trellis gleaning',
  'trellis summary',
  'trellis entity merge',
  'lightrag extraction',
  'lightrag summary',
  'lightrag keywords',
  'other',
] as const;
export type Purpose = (typeof PURPOSES)[number];

/** Calls by purpose, embedding requests and embedded texts, since the last `snapshot()`. */
export interface CallCounts {
  chat: Record<Purpose, number>;
  chatTotal: number;
  embeddingRequests: number;
  embeddedTexts: number;
  /** Most chat calls answered at the same time. */
  maxInFlight: number;
}

function purposeOf(messages: Message[]): Purpose {
  const system = messages[0]?.role === 'system' ? messages[0].content : '';
  const all = messages.map((m) => m.content).join('\n');
  if (system.startsWith('You build a knowledge graph')) return messages.length > 2 ? 'trellis gleaning' : 'trellis extraction';
  if (system.startsWith('You merge descriptions')) return 'trellis summary';
  if (system.startsWith('You decide whether two descriptions')) return 'trellis entity merge';
  if (all.includes('Knowledge Graph Specialist responsible for extracting entities')) return 'lightrag extraction';
  if (all.includes('proficient in data curation and synthesis')) return 'lightrag summary';
  if (all.includes('expert keyword extractor')) return 'lightrag keywords';
  return 'other';
}

/** The text between the markers LightRAG's prompts fence their input with. */
function between(text: string, start: string, end: string): string {
  const from = text.lastIndexOf(start);
  if (from < 0) return '';
  const rest = text.slice(from + start.length);
  const to = rest.indexOf(end);
  return to < 0 ? rest : rest.slice(0, to);
}

function answer(purpose: Purpose, messages: Message[]): string {
  const user = messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
  switch (purpose) {
    case 'trellis extraction':
      return graphJson(user);
    case 'trellis gleaning':
      return '{"entities": [], "relationships": []}';
    case 'trellis summary':
      return user.split('\n- ').slice(1, 4).join(' ').slice(0, 600);
    case 'trellis entity merge':
      return '{"same": false}';
    case 'lightrag extraction':
      return graphRecords(between(user, '---Input Text---\n```\n', '\n```'));
    case 'lightrag summary': {
      const descriptions = [...user.matchAll(/^\{"Description": (".*")\}$/gm)].map((m) => JSON.parse(m[1]!) as string);
      return descriptions.slice(0, 3).join(' ').slice(0, 600);
    }
    case 'lightrag keywords': {
      const query = between(user, 'User Query:', '\n');
      const names = query.match(/\b[A-Z][\p{L}'-]+(?:\s+[A-Z][\p{L}'-]+)*/gu) ?? [];
      const words = query.toLowerCase().match(/[a-z]{5,}/g) ?? [];
      return JSON.stringify({ high_level_keywords: words.slice(0, 3), low_level_keywords: names });
    }
    case 'other':
      return 'ok';
  }
}

export class PeerLlm {
  /** Latency of every chat answer, in ms; the bench changes it between phases. */
  latencyMs = 0;
  private readonly server: FakeOpenAiServer;
  private readonly chat = Object.fromEntries(PURPOSES.map((p) => [p, 0])) as Record<Purpose, number>;
  private mark = { ...this.chat };

  constructor(readonly dimensions: number) {
    this.server = new FakeOpenAiServer(dimensions);
    this.server.respondWith((request): ScriptedReply => {
      const messages = request.messages as Message[];
      const purpose = purposeOf(messages);
      this.chat[purpose] += 1;
      return { kind: 'content', content: answer(purpose, messages), delayMs: this.latencyMs };
    });
  }

  /** The `/v1` URL both systems are pointed at, once started. */
  baseUrl = '';

  async start(): Promise<void> {
    this.baseUrl = await this.server.start();
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  /** What was asked since the previous snapshot. */
  snapshot(): CallCounts {
    const chat = Object.fromEntries(PURPOSES.map((p) => [p, this.chat[p] - this.mark[p]])) as Record<Purpose, number>;
    const embeddings = this.server.requests.filter((r) => r.path.endsWith('/embeddings'));
    this.mark = { ...this.chat };
    // The fake keeps every request body; counted, they can go.
    this.server.requests.length = 0;
    const maxInFlight = this.server.maxChatInFlight;
    this.server.maxChatInFlight = 0;
    return {
      chat,
      chatTotal: PURPOSES.reduce((sum, p) => sum + chat[p], 0),
      embeddingRequests: embeddings.length,
      embeddedTexts: embeddings.reduce((sum, r) => sum + (Array.isArray(r.body.input) ? r.body.input.length : 1), 0),
      maxInFlight,
    };
  }
}

/** A built standalone server pointed at a PeerLlm, with a client once /healthz answers. */
export interface ServerOnPeerLlm {
  readonly process: ChildProcess;
  readonly client: TrellisClient;
  /** Closes the client, stops the server and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts `checkout`'s built standalone server on free ports with data in `dataDir`, chat and
 * embeddings from `llm`, and `env` beside (nothing else of this process's environment but PATH);
 * resolves once /healthz answers.
 */
export async function startServerOnPeerLlm(checkout: string, llm: PeerLlm, dataDir: string, env: Record<string, string>): Promise<ServerOnPeerLlm> {
  const server = await startBuiltServer({ checkout, dataDir, env: { PATH: process.env.PATH ?? '', ...fakeProviderEnv(llm.baseUrl, llm.dimensions, env) } });
  const exited = new Promise((r) => server.process.once('exit', r));
  const client = new TrellisClient({ address: server.grpcAddress, timeoutMs: 120_000 });
  const stop = async () => {
    client.close();
    server.process.kill('SIGTERM');
    await exited;
  };
  return { process: server.process, client, stop };
}
