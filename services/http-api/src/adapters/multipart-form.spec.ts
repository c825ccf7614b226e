import { describe, expect, it } from 'vitest';
import { multipartBoundary, parseMultipart } from './multipart-form';
import { HttpFailure } from './request-body';

describe('multipart/form-data', () => {
  it('reads the parts a browser FormData sends, bytes intact', async () => {
    const form = new FormData();
    const bytes = new Uint8Array([0, 13, 10, 45, 45, 255]);
    form.set('file', new Blob([bytes], { type: 'application/pdf' }), 'paper.pdf');
    form.set('metadata', '{"sourceUri":"s3://x"}');
    const request = new Request('http://x', { method: 'POST', body: form });
    const boundary = multipartBoundary(request.headers.get('content-type')!);
    const parts = parseMultipart(Buffer.from(await request.arrayBuffer()), boundary);
    expect(parts.map((p) => [p.name, p.filename, p.contentType])).toEqual([
      ['file', 'paper.pdf', 'application/pdf'],
      ['metadata', undefined, undefined],
    ]);
    expect([...parts[0]!.data]).toEqual([...bytes]);
    expect(parts[1]!.data.toString()).toBe('{"sourceUri":"s3://x"}');
  });

  it('refuses other content types (415) and truncated bodies (400)', () => {
    const status = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return (error as HttpFailure).http.status;
      }
      return 'ok';
    };
    expect(status(() => multipartBoundary('application/json'))).toBe(415);
    expect(status(() => parseMultipart(Buffer.from('--b\r\ncontent-disposition: form-data; name="file"\r\n\r\nabc'), 'b'))).toBe(400);
  });
});
