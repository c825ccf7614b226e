import { describe, expect, it } from 'vitest';
import { ExtractionReport } from './extraction-report';
import { parseJsonLoosely, validateExtraction } from './extraction-validation';

describe('parseJsonLoosely', () => {
  it('reads plain JSON without counting a repair', () => {
    const report = new ExtractionReport();
    expect(parseJsonLoosely('{"entities": []}', report)).toEqual({ entities: [] });
    expect(report.items()).toEqual([]);
  });

  it('digs JSON out of code fences, chatter and trailing commas, and counts it', () => {
    const report = new ExtractionReport();
    expect(parseJsonLoosely('Sure! ```json\n{"entities": []}\n``` done', report)).toEqual({ entities: [] });
    expect(parseJsonLoosely('Here: {"entities": [{"name": "A",}],} hope that helps', report)).toEqual({ entities: [{ name: 'A' }] });
    expect(report.total('reply', 'repaired', 'extracted_from_text')).toBe(2);
  });

  it('gives undefined for replies with no readable object, counted as unparseable', () => {
    const report = new ExtractionReport();
    expect(parseJsonLoosely('not json at all', report)).toBeUndefined();
    expect(parseJsonLoosely('{"entities": [1, 2', report)).toBeUndefined();
    expect(parseJsonLoosely('[1, 2]', report)).toBeUndefined();
    expect(report.total('reply', 'dropped', 'unparseable')).toBe(3);
  });
});

describe('validateExtraction', () => {
  it('keeps valid items, repairs what it can and drops the rest, counting every reason', () => {
    const report = new ExtractionReport();
    const result = validateExtraction(
      {
        entities: [
          { name: '  TiDB ', type: 'Database', description: 'A  distributed SQL database.', attributes: [{ key: 'license', value: 'Apache 2.0' }, { key: '', value: 'x' }] },
          { name: '', type: 'x' },
          { name: 'tidb', type: 'dup', description: 'duplicate by case' },
          'garbage',
          { name: 42 },
          { name: 'PingCAP', description: 'The company.', attributes: { founded: 2015, hq: 'Beijing' } },
          { name: 'Long', type: 'concept', description: 'x'.repeat(1500) },
        ],
        relationships: [
          { source: 'TiDB', target: 'TiKV', label: 'Stores data in', description: 'TiDB stores data in TiKV.', strength: 14 },
          { source: 'TiDB', target: 'TiDB', label: 'self', description: '', strength: 5 },
          { source: 'TiDB', label: 'no target' },
          { source: 'PD', target: 'TiKV', description: 'schedules', strength: 'high' },
          { source: 'PingCAP', target: 'TiDB', label: 'develops', description: 'PingCAP develops TiDB.', strength: 9 },
          { source: 'pingcap', target: 'tidb', label: 'Develops', description: 'again', strength: 9 },
          7,
        ],
      },
      {},
      report,
    );
    expect(result.entities).toEqual([
      { name: 'TiDB', type: 'database', description: 'A distributed SQL database.', attributes: { license: 'Apache 2.0' } },
      { name: 'PingCAP', type: 'concept', description: 'The company.', attributes: { founded: '2015', hq: 'Beijing' } },
      { name: 'Long', type: 'concept', description: 'x'.repeat(1000) },
      { name: 'TiKV', type: 'concept', description: '', needsReview: true },
      { name: 'PD', type: 'concept', description: '', needsReview: true },
    ]);
    expect(result.relationships).toEqual([
      { source: 'TiDB', target: 'TiKV', label: 'stores data in', description: 'TiDB stores data in TiKV.', strength: 10 },
      { source: 'PD', target: 'TiKV', label: 'related to', description: 'schedules', strength: 5 },
      { source: 'PingCAP', target: 'TiDB', label: 'develops', description: 'PingCAP develops TiDB.', strength: 9 },
    ]);
    const counts = Object.fromEntries(report.items().map((c) => [`${c.kind}/${c.outcome}/${c.reason}`, c.count]));
    expect(counts).toEqual({
      'entity/repaired/attributes_invalid': 1,
      'entity/dropped/missing_name': 2,
      'entity/dropped/duplicate': 1,
      'entity/dropped/not_an_object': 1,
      'entity/repaired/type_defaulted': 1,
      'entity/repaired/truncated': 1,
      'relationship/repaired/strength_clamped': 1,
      'relationship/dropped/self_loop': 1,
      'relationship/dropped/missing_endpoint': 1,
      'relationship/repaired/label_defaulted': 1,
      'relationship/kept/valid': 1,
      'relationship/dropped/duplicate': 1,
      'relationship/dropped/not_an_object': 1,
      'entity/added/relationship_endpoint': 2,
    });
  });

  it("maps types outside the knowledge base's entity types to other", () => {
    const report = new ExtractionReport();
    const result = validateExtraction(
      { entities: [{ name: 'Aspirin', type: 'Drug', description: '' }, { name: 'Bayer', type: 'company', description: '' }, { name: 'X', description: '' }] },
      { entityTypes: ['drug', 'disease'] },
      report,
    );
    expect(result.entities.map((e) => `${e.name}:${e.type}`)).toEqual(['Aspirin:drug', 'Bayer:other', 'X:other']);
    expect(report.total('entity', 'repaired', 'type_not_allowed')).toBe(1);
    expect(report.total('entity', 'kept', 'valid')).toBe(1);
  });

  it('turns a reply without the expected shape into an empty result, counted once', () => {
    const report = new ExtractionReport();
    expect(validateExtraction(null, {}, report)).toEqual({ entities: [], relationships: [] });
    expect(validateExtraction({ entities: 'nope' }, {}, report)).toEqual({ entities: [], relationships: [] });
    expect(report.total('reply', 'dropped', 'wrong_shape')).toBe(2);
    expect(validateExtraction(undefined, {}, report)).toEqual({ entities: [], relationships: [] });
    expect(report.total('reply', 'dropped')).toBe(2);
  });
});
