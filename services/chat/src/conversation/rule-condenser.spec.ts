import { describe, expect, it } from 'vitest';
import type { v1 } from '@trellis/contracts';
import { condenseWithRules } from './rule-condenser';

const turn = (question: string, answer: string): v1.ChatMessage[] => [
  { role: 'user', content: question },
  { role: 'assistant', content: answer },
];

describe('condenseWithRules (follow-ups without a language model)', () => {
  const paris = turn('What is the capital of France?', 'The capital of France is Paris [1].');

  it("appends the previous question's names to a follow-up that refers back with a pronoun, and the answer's when it points at a person", () => {
    expect(condenseWithRules('When was it founded?', turn('Who founded the Radium Institute?', 'Marie Curie founded it in 1909 [1].'))).toBe('When was it founded? (Radium Institute)');
    expect(condenseWithRules('Where was he born?', turn('Who directed Inception?', 'Christopher Nolan directed Inception [2].'))).toBe('Where was he born? (Inception, Christopher Nolan)');
    expect(condenseWithRules('What did they release in 1971?', turn('Which band recorded Stairway to Heaven?', 'Led Zeppelin [1].'))).toBe(
      'What did they release in 1971? (Stairway, Heaven, Led Zeppelin)',
    );
    expect(condenseWithRules('Who lived there?', turn('Tell me about Villa Medici', 'Villa Medici is in Rome [1].'))).toBe('Who lived there? (Villa Medici)');
  });

  it('completes an elliptical follow-up ("and its population?", a few words without a name)', () => {
    expect(condenseWithRules('and its population?', paris)).toBe('and its population? (France)');
    expect(condenseWithRules('How many people?', paris)).toBe('How many people? (France)');
    expect(condenseWithRules('also the area', paris)).toBe('also the area (France)');
  });

  it('swaps the new name into the previous question for "what about X?"', () => {
    expect(condenseWithRules('What about Germany?', paris)).toBe('What is the capital of Germany?');
    expect(condenseWithRules('and Spain?', paris)).toBe('What is the capital of Spain?');
  });

  it('lends the previous question\'s key words when it had no names', () => {
    expect(condenseWithRules('How tall is it?', turn('what is the tallest mountain on earth', 'Everest [1]'))).toBe('How tall is it? (tallest, mountain, earth)');
    expect(condenseWithRules('How tall is it?', turn('what is the tallest mountain on earth', 'It is Mount Everest [1].'))).toBe('How tall is it? (Mount Everest)');
  });

  it('leaves a question that stands alone, one without history, and names it already mentions', () => {
    expect(condenseWithRules('Who wrote the novel Dune and when was the book published?', paris)).toBe('Who wrote the novel Dune and when was the book published?');
    expect(condenseWithRules('When was it founded?', [])).toBe('When was it founded?');
    expect(condenseWithRules('Is Paris bigger than its suburbs in France?', paris)).toBe('Is Paris bigger than its suburbs in France?');
  });

  it('adds a name once, without the article that opens the answer', () => {
    expect(condenseWithRules('When did she lead it?', turn('Who directed the Radium Institute?', 'The Radium Institute was led by Marie Curie [1].'))).toBe(
      'When did she lead it? (Radium Institute, Marie Curie)',
    );
  });

  it("prefers the answer's names of several words, and skips month names", () => {
    const prestige = turn('Who directed The Prestige?', 'The Prestige is a 2006 British-American film directed by Christopher Nolan in September [1].');
    expect(condenseWithRules('Where was he born?', prestige)).toBe('Where was he born? (Prestige, Christopher Nolan, British-American)');
  });

  it('replaces a name by the fuller one the answer gives', () => {
    expect(condenseWithRules('What did she discover?', turn('Who directed the Curie laboratory?', 'It was directed by Marie Curie [1].'))).toBe('What did she discover? (Marie Curie)');
  });

  it('reads the latest question of a longer conversation', () => {
    const history = [...turn('Who founded the Radium Institute?', 'Marie Curie [1].'), ...paris];
    expect(condenseWithRules('What is its population?', history)).toBe('What is its population? (France)');
  });
});
