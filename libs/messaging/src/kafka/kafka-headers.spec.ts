import { describe, expect, it } from 'vitest';
import { HEADER, deadLetterHeaders, headersToRecord, parseDeadLetter, publishHeaders } from './kafka-headers';

describe('publishHeaders', () => {
  it('adds the schema version and the producer traceparent to the caller headers', () => {
    expect(publishHeaders({ 'x-tenant': 't-1' }, 2, '00-abc-def-01')).toEqual({
      'x-tenant': 't-1',
      'trellis-schema-version': '2',
      traceparent: '00-abc-def-01',
    });
  });

  it('keeps a traceparent the caller passed, and leaves it out when there is none', () => {
    expect(publishHeaders({ traceparent: 'from-caller' }, 1, 'from-producer')['traceparent']).toBe('from-caller');
    expect(publishHeaders({}, 1, undefined)).toEqual({ 'trellis-schema-version': '1' });
  });

  it('does not let the caller misstate the schema version of the bytes', () => {
    expect(publishHeaders({ 'trellis-schema-version': '9' }, 1, undefined)['trellis-schema-version']).toBe('1');
  });
});

describe('dead-letter headers', () => {
  const failure = { sourceTopic: 'chunk.ready', group: 'extraction', error: 'no such chunk', attempts: 3, failedAt: new Date('2030-01-02T03:04:05.000Z') } as const;

  it('add why and where the event failed to its own headers', () => {
    expect(deadLetterHeaders({ traceparent: 'tp' }, failure)).toEqual({
      traceparent: 'tp',
      'trellis-error': 'no such chunk',
      'trellis-attempts': '3',
      'trellis-source-topic': 'chunk.ready',
      'trellis-group': 'extraction',
      'trellis-failed-at': '2030-01-02T03:04:05.000Z',
    });
  });

  it('cut very long error messages', () => {
    expect(deadLetterHeaders({}, { ...failure, error: 'x'.repeat(10_000) })[HEADER.error]).toHaveLength(2_000);
  });

  it('parse back into a dead letter whose headers are the event’s own', () => {
    const headers = deadLetterHeaders({ traceparent: 'tp', 'trellis-schema-version': '1' }, failure);
    const letter = parseDeadLetter('chunk.ready', {
      key: Buffer.from('doc-1'),
      value: Buffer.from([1, 2, 3]),
      headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Buffer.from(v)])),
      timestamp: '0',
    });
    expect(letter).toEqual({
      topic: 'chunk.ready',
      key: 'doc-1',
      group: 'extraction',
      error: 'no such chunk',
      attempts: 3,
      failedAt: '2030-01-02T03:04:05.000Z',
      payload: Uint8Array.from([1, 2, 3]),
      headers: { traceparent: 'tp', 'trellis-schema-version': '1' },
    });
  });

  it('parse a record produced by hand, without the bus’s headers', () => {
    const letter = parseDeadLetter('chunk.ready', { key: null, value: null, headers: {}, timestamp: String(Date.UTC(2030, 0, 1)) });
    expect(letter).toMatchObject({ key: '', group: '', error: '', attempts: 0, failedAt: '2030-01-01T00:00:00.000Z', headers: {} });
    expect(letter.payload).toEqual(new Uint8Array());
  });
});

describe('headersToRecord', () => {
  it('turns buffers and strings into strings, keeping the last of repeated headers', () => {
    expect(headersToRecord({ a: Buffer.from('1'), b: '2', c: [Buffer.from('3'), '4'], d: undefined })).toEqual({ a: '1', b: '2', c: '4' });
    expect(headersToRecord(undefined)).toEqual({});
  });
});
