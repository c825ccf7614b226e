import type { v1 } from '@trellis/contracts';
import type { ChatModel } from '@trellis/models';

/** Writes a corpus-wide answer from numbered community reports; yields text as it is produced. */
export interface GlobalAnswerComposer {
  compose(question: string, communities: readonly v1.CommunityHit[]): AsyncIterable<string>;
}

/** Communities a map-reduce answer reads (one map call each); the retrieval's top_k bounds it too. */
const MAP_COMMUNITIES = 5;
const POINTS_PER_COMMUNITY = 3;

/**
 * Without a language model: an overview naming each of the best communities, its title and the
 * first sentence of its summary, each citing its community [n].
 */
export class ExtractiveOverviewComposer implements GlobalAnswerComposer {
  async *compose(_question: string, communities: readonly v1.CommunityHit[]): AsyncIterable<string> {
    if (communities.length === 0) {
      yield 'This knowledge base has no communities yet, so there is no overview to give.';
      return;
    }
    yield `Across the knowledge base, the most relevant themes are:\n`;
    for (const [i, c] of communities.entries()) {
      const lead = /^(.+?[.!?])(\s|$)/.exec(c.summary)?.[1] ?? c.summary;
      yield `${i + 1}. ${c.title}: ${lead} [${i + 1}]\n`;
    }
  }
}

const MAP_SCHEMA = {
  name: 'community_points',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['points'],
    properties: {
      points: {
        type: 'array',
        items: { type: 'object', additionalProperties: false, required: ['text', 'score'], properties: { text: { type: 'string' }, score: { type: 'number' } } },
      },
    },
  },
};

const REDUCE_PROMPT = `You answer a question about a whole collection of documents from key points found in its communities (groups of related entities).
Each point carries the number of its community in square brackets. Combine the points into one answer, most important first,
citing every statement with its community number like [1] or [2][3]. Use only the points. If they do not answer the question, say so.`;

/**
 * With a language model, map-reduce in the manner of GraphRAG's global search: each of the best
 * community reports is asked for the points that help answer the question, each scored
 * 0-100 (map, one call per community); the points that scored above zero, best first, are then
 * combined into one streamed answer citing their communities (reduce, one call).
 */
export class MapReduceAnswerComposer implements GlobalAnswerComposer {
  constructor(private readonly llm: ChatModel) {}

  async *compose(question: string, communities: readonly v1.CommunityHit[]): AsyncIterable<string> {
    const mapped = await Promise.all(communities.slice(0, MAP_COMMUNITIES).map((c, i) => this.points(question, c, i + 1)));
    const points = mapped.flat().filter((p) => p.score > 0).sort((a, b) => b.score - a.score || a.community - b.community);
    if (points.length === 0) {
      yield 'The communities of this knowledge base say nothing that answers this question.';
      return;
    }
    const listed = points.map((p) => `- ${p.text} [${p.community}] (importance ${p.score})`).join('\n');
    yield* this.llm.stream(
      [
        { role: 'system', content: REDUCE_PROMPT },
        { role: 'user', content: `Key points:\n${listed}\n\nQuestion: ${question}` },
      ],
      { temperature: 0.1 },
    );
  }

  private async points(question: string, c: v1.CommunityHit, community: number): Promise<Array<{ text: string; score: number; community: number }>> {
    const facts = c.keyFacts.map((f) => `- ${f.text}`).join('\n');
    const reply = await this.llm.complete(
      [
        {
          role: 'system',
          content:
            `From one community report, list at most ${POINTS_PER_COMMUNITY} points that help answer the question, each scored 0-100 for how much it helps (0: not at all). ` +
            'Use only the report. Reply as JSON {"points": [{"text": ..., "score": ...}]}.',
        },
        { role: 'user', content: `Report: ${c.title}\n${c.summary}\nKey facts:\n${facts}\n\nQuestion: ${question}` },
      ],
      { jsonSchema: MAP_SCHEMA, temperature: 0 },
    );
    const parsed = JSON.parse(reply) as { points?: Array<{ text?: unknown; score?: unknown }> };
    return (parsed.points ?? [])
      .filter((p): p is { text: string; score: number } => typeof p.text === 'string' && typeof p.score === 'number' && Number.isFinite(p.score))
      .slice(0, POINTS_PER_COMMUNITY)
      .map((p) => ({ text: p.text.trim(), score: Math.max(0, Math.min(100, p.score)), community }));
  }
}

const SNIPPET_CHARS = 240;

/** The communities the answer cites with [n], in order of first citation, with their source chunks. */
export function communityCitationsIn(text: string, communities: readonly v1.CommunityHit[], sources: readonly v1.ChunkHit[]): v1.Citation[] {
  const byChunk = new Map(sources.map((s) => [s.chunkId, s]));
  const seen = new Set<number>();
  const citations: v1.Citation[] = [];
  for (const match of text.matchAll(/\[(\d{1,3})\]/g)) {
    const index = Number(match[1]);
    const c = communities[index - 1];
    if (c === undefined || seen.has(index)) continue;
    seen.add(index);
    const chunkIds = [...new Set(c.keyFacts.flatMap((f) => f.chunkIds))];
    const first = chunkIds.map((id) => byChunk.get(id)).find((s) => s !== undefined);
    const snippet = `${c.title}: ${c.summary}`;
    citations.push({
      index,
      documentId: first?.documentId ?? '',
      chunkId: first?.chunkId ?? chunkIds[0] ?? '',
      sourceUri: first?.sourceUri ?? '',
      snippet: snippet.length <= SNIPPET_CHARS ? snippet : `${snippet.slice(0, SNIPPET_CHARS - 1)}…`,
      communityId: c.id,
      sourceChunkIds: chunkIds,
    });
  }
  return citations;
}
