import { describe, expect, it } from 'vitest';
import { stampDigest } from './stamp-digest';

describe('stampDigest', () => {
  it('is a whole number below 2^53, the same for the same stamp', () => {
    for (const stamp of ['', 'a', 'rel_01HZX0summaryhash0', '0'.repeat(64), 'é 漢字']) {
      const digest = stampDigest(stamp);
      expect(Number.isSafeInteger(digest) && digest >= 0).toBe(true);
      expect(stampDigest(`${stamp}`)).toBe(digest);
    }
  });

  it('tells apart stamps that differ in one character, in their order, or in their length', () => {
    // Stamps the way the stores write them: ids with a fingerprint after them, content hashes.
    const stamps = new Set<string>();
    for (let i = 0; i < 100_000; i++) {
      stamps.add(`rel_${i.toString(36).padStart(8, '0')}${(i * 2654435761 >>> 0).toString(16)}0retrievable`);
      stamps.add((i * 40503).toString(16).padStart(64, '0'));
    }
    stamps.add('ab');
    stamps.add('ba');
    stamps.add('ab\u0000');
    const digests = new Set([...stamps].map(stampDigest));
    expect(digests.size).toBe(stamps.size);
  });
});
