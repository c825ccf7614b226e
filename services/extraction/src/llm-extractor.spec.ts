import { describe, expect, it } from 'vitest';
import { parseJsonLoosely, validateExtraction } from './llm-extractor';

describe('LLM output handling', () => {
  it('parses JSON inside code fences and surrounding chatter', () => {
    expect(parseJsonLoosely('Sure! ```json\n{"entities": []}\n``` done')).toEqual({ entities: [] });
    expect(parseJsonLoosely('not json at all')).toEqual({});
    expect(parseJsonLoosely('{"entities": [1, 2')).toEqual({});
  });

  it('keeps valid items, repairs what it can and drops the rest', () => {
    const result = validateExtraction({
      entities: [
        { name: '  TiDB ', type: 'Database', description: 'A  distributed SQL database.' },
        { name: '', type: 'x' },
        { name: 'tidb', type: 'dup', description: 'duplicate by case' },
        'garbage',
        { name: 42 },
      ],
      relationships: [
        { source: 'TiDB', target: 'TiKV', label: 'Stores data in', description: 'TiDB stores data in TiKV.', strength: 14 },
        { source: 'TiDB', target: 'TiDB', label: 'self', description: '', strength: 5 },
        { source: 'TiDB', label: 'no target' },
        { source: 'PD', target: 'TiKV', description: 'schedules', strength: 'high' },
      ],
    });
    expect(result.entities).toEqual([
      { name: 'TiDB', type: 'database', description: 'A distributed SQL database.' },
      { name: 'TiKV', type: 'unreviewed', description: '' },
      { name: 'PD', type: 'unreviewed', description: '' },
    ]);
    expect(result.relationships).toEqual([
      { source: 'TiDB', target: 'TiKV', label: 'stores data in', description: 'TiDB stores data in TiKV.', strength: 10 },
      { source: 'PD', target: 'TiKV', label: 'related to', description: 'schedules', strength: 5 },
    ]);
  });

  it('turns a reply without the expected shape into an empty result', () => {
    expect(validateExtraction(null)).toEqual({ entities: [], relationships: [] });
    expect(validateExtraction({ entities: 'nope' })).toEqual({ entities: [], relationships: [] });
  });
});
