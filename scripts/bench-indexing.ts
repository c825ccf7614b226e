// What the benches that index a corpus through a fake LLM share: the fake model's answers to
// the indexing pipeline's calls, and waiting until a knowledge base has indexed what it was given.
import type { TrellisClient } from '@trellis/client';
import { graphJson } from '@trellis/testing';
import { chunksOf, untilGraphed } from './bench-kit.mjs';

export type Message = { role: string; content: string };

/** What an indexing call is for: extraction (gleaning turns too), a description summary, an entity merge. */
export type IndexingPurpose = 'extraction' | 'summary' | 'merge';

/** What a chat request is for, told by its system prompt. */
export function indexingPurpose(messages: readonly Message[]): IndexingPurpose {
  const system = messages[0]?.content ?? '';
  if (system.startsWith('You merge descriptions')) return 'summary';
  if (system.startsWith('You decide whether two descriptions')) return 'merge';
  return 'extraction';
}

/**
 * A plausible answer to an indexing call: graph JSON built from the chunk text (on a gleaning
 * turn nothing new, as a model typically finds little more), a summary made of the first three
 * descriptions, and "not the same" to every merge question.
 */
export function fakeIndexingAnswer(messages: readonly Message[], purpose = indexingPurpose(messages)): string {
  if (purpose === 'summary') return messages[1]!.content.split('\n- ').slice(1, 4).join(' ').slice(0, 600);
  if (purpose === 'merge') return '{"same": false}';
  return messages.length > 2 ? '{"entities": [], "relationships": []}' : graphJson(messages[1]!.content);
}

/** Waits until every document of the knowledge base is graphed or failed; resolves with their chunks. */
export async function waitForIndexed(client: TrellisClient, kb: string): Promise<number> {
  return chunksOf(await untilGraphed(client, kb, (await client.listAllDocuments(kb)).map((d) => d.id), 250));
}
