import { describe, expect, it } from 'vitest';
import type { ChatModel } from '@trellis/models';
import type { ChunkRecord } from '@trellis/storage';
import type { RankedChunk } from './chunk-retriever';
import { QuestionDecomposer, parseSubQuestions } from './question-decomposer';
import { fuseRankings } from './chunk-retriever';

function model(reply: () => Promise<string>): ChatModel & { calls: number } {
  const m = {
    model: 'fake',
    calls: 0,
    complete: async () => {
      m.calls++;
      return reply();
    },
    stream: async function* () {
      yield '';
    },
  };
  return m;
}

function hit(id: string): RankedChunk {
  return { chunk: { id } as ChunkRecord, score: 1, signals: [{ source: 'fulltext', score: 1, rank: 1 }] };
}

describe('question decomposition', () => {
  it('asks the model once and keeps distinct sub-questions other than the question', async () => {
    const llm = model(async () => JSON.stringify({ sub_questions: ['Who directed Harbour of Lanterns?', ' Where was Odile Marchetti born? ', 'who directed harbour of lanterns?', 'Q?'] }));
    const subs = await new QuestionDecomposer(llm).decompose('Q?');
    expect(subs).toEqual(['Who directed Harbour of Lanterns?', 'Where was Odile Marchetti born?']);
    expect(llm.calls).toBe(1);
  });

  it('leaves the question whole when the model fails or replies badly', async () => {
    expect(await new QuestionDecomposer(model(async () => Promise.reject(new Error('down')))).decompose('Q?')).toEqual([]);
    expect(parseSubQuestions('not json', 'Q?')).toEqual([]);
    expect(parseSubQuestions('{"sub_questions": "one"}', 'Q?')).toEqual([]);
    expect(parseSubQuestions('{"sub_questions": ["a", "b", "c", "d", "e"]}', 'Q?')).toEqual(['a', 'b', 'c']);
  });

  it('fuses rankings by reciprocal rank, deduplicated by chunk', () => {
    const fused = fuseRankings([[hit('a'), hit('b')], [hit('b'), hit('c')]], 2);
    expect(fused.map((h) => h.chunk.id)).toEqual(['b', 'a']);
    expect(fused[0]!.signals).toHaveLength(2);
  });
});
