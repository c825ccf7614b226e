import { describe, expect, it } from 'vitest';
import { cleanName, isDiscourseWord } from './entity-names';

describe('cleanName', () => {
  it('keeps real names and trims what surrounds them', () => {
    expect(cleanName('the Radium Institute')).toBe('Radium Institute');
    expect(cleanName("Curie's")).toBe('Curie');
    expect(cleanName('brother Jacques Curie')).toBe('Jacques Curie');
    expect(cleanName('Node.js')).toBe('Node.js');
  });

  it('refuses code, markup and words that only frame a sentence', () => {
    for (const junk of ['NestFactory.create(AppModule)', 'Promise<void', 'Hint** The', 'Scope` enum', 'a = b', 'If', 'This', 'However', 'Hint', 'Warning', 'We']) {
      expect(cleanName(junk), junk).toBeNull();
    }
  });
});

describe('isDiscourseWord', () => {
  it('knows function words and admonition labels, not names', () => {
    expect(['If', 'this', 'Once', 'Note', 'TIP'].every(isDiscourseWord)).toBe(true);
    expect(['Redis', 'Kafka', 'Express', 'Paris'].some(isDiscourseWord)).toBe(false);
  });
});
