import { describe, expect, it } from 'vitest';
import { relationLabel } from './relation-label';

const at = (text: string, a: string, b: string) => ({ from: text.indexOf(a) + a.length, to: text.indexOf(b) });

describe('relationLabel', () => {
  it('reads the verb phrase between two names, with its preposition', () => {
    const text = 'Marie Curie was born in Warsaw.';
    const { from, to } = at(text, 'Marie Curie', 'Warsaw');
    const verbs = [{ text: 'was born', offset: { start: text.indexOf('was'), length: 'was born'.length } }];
    expect(relationLabel(verbs, from, to, text)).toEqual({ label: 'was born in', verbal: true });
  });

  it('falls back to a linking preposition, then to a parenthesised alias, then to nothing', () => {
    const of = 'Kamil Mysliwiec of Trilon';
    expect(relationLabel([], ...Object.values(at(of, 'Kamil Mysliwiec', 'Trilon')) as [number, number], of)).toEqual({ label: 'of', verbal: false });
    const alias = 'Nest (NestJS)';
    expect(relationLabel([], ...Object.values(at(alias, 'Nest', 'NestJS')) as [number, number], alias)).toEqual({ label: 'also called', verbal: false });
    const list = 'Redis, Kafka';
    expect(relationLabel([], ...Object.values(at(list, 'Redis', 'Kafka')) as [number, number], list)).toBeNull();
  });
});
