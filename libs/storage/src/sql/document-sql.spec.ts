import { describe, expect, it } from 'vitest';
import { splitText } from './document-sql';

describe('document text parts', () => {
  it('splits into bounded parts that join back, never inside a surrogate pair', () => {
    const text = `abc😀def😀`;
    const parts = splitText(text, 4);
    expect(parts.join('')).toBe(text);
    expect(parts.every((p) => p.length <= 4)).toBe(true);
    for (const part of parts) expect(Buffer.from(part, 'utf8').toString('utf8')).toBe(part);
    expect(splitText('')).toEqual(['']);
  });
});
