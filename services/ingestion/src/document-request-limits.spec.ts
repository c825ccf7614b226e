import { describe, expect, it } from 'vitest';
import { validateDocumentMetadata, validateFilename, validateSourceUri } from './document-request-limits';

describe('document request limits', () => {
  it('keeps the last path segment of a file name', () => {
    expect(validateFilename(' docs/guide.md ')).toBe('guide.md');
    expect(validateFilename('Ünïcödé 日本.txt')).toBe('Ünïcödé 日本.txt');
  });

  it('refuses empty, over-long and control-character file names', () => {
    expect(() => validateFilename('  ')).toThrow('filename is required');
    expect(() => validateFilename(`${'a'.repeat(256)}.txt`)).toThrow('filename is longer than 255 characters');
    expect(() => validateFilename('a\u0000.txt')).toThrow('filename contains the control character U+0000');
    expect(() => validateFilename('a\r\n.txt')).toThrow('filename contains the control character U+000D');
    expect(() => validateFilename('evil\u202Etxt.exe')).toThrow('filename contains the control character U+202E');
  });

  it('bounds source URIs and metadata', () => {
    expect(validateSourceUri('https://example.com/a')).toBe('https://example.com/a');
    expect(() => validateSourceUri(`https://example.com/${'a'.repeat(2048)}`)).toThrow('source_uri is longer than 2048 characters');
    expect(() => validateSourceUri('x\ny', 'url')).toThrow('url contains the control character U+000A');
    expect(validateDocumentMetadata({ team: 'docs' })).toEqual({ team: 'docs' });
    expect(() => validateDocumentMetadata(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])))).toThrow('metadata has more than 64 entries');
    expect(() => validateDocumentMetadata({ team: 'x'.repeat(2049) })).toThrow('metadata["team"] is longer than 2048 characters');
    expect(() => validateDocumentMetadata({ 'a\u0000': 'v' })).toThrow('a metadata key contains the control character U+0000');
  });
});
