import { describe, expect, it } from 'vitest';
import { EvalFileError, dedupeRanking, parseCorpus, parseQuestions, percentile, recallAt, reciprocalRank, summarize } from './retrieval-evaluation';

describe('eval files', () => {
  const corpus = ['{"id": "p1", "title": "One", "text": "first"}', '', '{"id": "p2", "title": "Two", "text": "second"}'].join('\n');

  it('parses passages and questions, skipping blank lines', () => {
    const passages = parseCorpus('corpus.jsonl', corpus);
    expect(passages).toEqual([
      { id: 'p1', title: 'One', text: 'first' },
      { id: 'p2', title: 'Two', text: 'second' },
    ]);
    const questions = parseQuestions('q.jsonl', '{"id": "q1", "question": "Which?", "answer": "x", "gold": ["p1", "p2", "p1"]}\n', new Set(['p1', 'p2']));
    expect(questions).toEqual([{ id: 'q1', question: 'Which?', gold: ['p1', 'p2'] }]);
  });

  it.each([
    ['corpus', '{"id": "p1", "text": "a"}\n{"id": "p2", "text": "b"\n', 'corpus.jsonl:2: not valid JSON'],
    ['corpus', '{"id": "p1", "text": "a"}\n\n{"id": "p1", "text": "b"}', 'corpus.jsonl:3: duplicate passage id "p1"'],
    ['corpus', '{"id": "p1"}', 'corpus.jsonl:1: "text" must be a non-empty string'],
    ['corpus', '["p1", "text"]', 'corpus.jsonl:1: expected a JSON object'],
    ['corpus', '\n\n', 'corpus.jsonl:1: the file has no records'],
    ['questions', '{"id": "q1", "question": "Why?", "gold": ["p1"]}\n{"id": "q2", "question": "How?", "gold": []}', 'questions.jsonl:2: "gold" must be a non-empty array of passage ids'],
    ['questions', '{"id": "q1", "gold": ["p1"]}', 'questions.jsonl:1: "question" must be a non-empty string'],
    ['questions', '{"id": "q1", "question": "Why?", "gold": ["p9"]}', 'questions.jsonl:1: gold passage "p9" is not in the corpus'],
  ])('reports a malformed %s file with its line number', (kind, content, message) => {
    const parse = () => (kind === 'corpus' ? parseCorpus('corpus.jsonl', content) : parseQuestions('questions.jsonl', content, new Set(['p1'])));
    expect(parse).toThrow(EvalFileError);
    expect(parse).toThrow(message);
  });
});

describe('metrics', () => {
  it('counts a passage once however many of its chunks were retrieved', () => {
    expect(dedupeRanking(['a', 'a', 'b', 'a', 'c'])).toEqual(['a', 'b', 'c']);
  });

  it('computes Recall@k and the reciprocal rank of the first gold passage', () => {
    const retrieved = ['x', 'g1', 'y', 'z', 'g2'];
    expect(recallAt(retrieved, ['g1', 'g2'], 2)).toBe(0.5);
    expect(recallAt(retrieved, ['g1', 'g2'], 5)).toBe(1);
    expect(reciprocalRank(retrieved, ['g1', 'g2'])).toBe(0.5);
    expect(reciprocalRank(retrieved, ['nope'])).toBe(0);
  });

  it('uses nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 95)).toBe(95);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 95)).toBe(0);
  });

  it('averages over questions', () => {
    const summary = summarize(
      [
        { retrieved: ['g1', 'g2'], gold: ['g1', 'g2'], latencyMs: 10 },
        { retrieved: ['x', 'g3'], gold: ['g3', 'g4'], latencyMs: 30 },
      ],
      [1, 2],
    );
    expect(summary.recall[1]).toBe(0.25);
    expect(summary.recall[2]).toBe(0.75);
    expect(summary.mrr).toBe(0.75);
    expect(summary.latencyP50Ms).toBe(10);
    expect(summary.latencyP95Ms).toBe(30);
  });
});
