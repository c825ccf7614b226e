import { HttpFailure } from './request-body';
import { httpError } from './http-status';

export interface FormPart {
  readonly name: string;
  readonly filename?: string;
  readonly contentType?: string;
  readonly data: Buffer;
}

/** The boundary of a `multipart/form-data` Content-Type, or a 415. */
export function multipartBoundary(contentType: string | undefined): string {
  const [type, ...params] = (contentType ?? '').split(';').map((p) => p.trim());
  if (type?.toLowerCase() !== 'multipart/form-data') throw new HttpFailure(httpError(415, `expected multipart/form-data with a file part, got ${type || 'no Content-Type'}`));
  const boundary = params.map((p) => /^boundary="?([^"]+)"?$/i.exec(p)?.[1]).find((b) => b !== undefined);
  if (boundary === undefined) throw new HttpFailure(httpError(400, 'multipart/form-data without a boundary'));
  return boundary;
}

/**
 * The parts of a multipart/form-data body (RFC 7578) already read within the size limit.
 * Parts are found by their delimiter lines; each part's headers give its name, file name and type.
 */
export function parseMultipart(body: Buffer, boundary: string): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let start = body.indexOf(delimiter);
  if (start < 0) throw new HttpFailure(httpError(400, 'the multipart body has no part'));
  for (;;) {
    start += delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') return parts;
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), start);
    if (next < 0) throw new HttpFailure(httpError(400, 'the multipart body ends inside a part'));
    const part = body.subarray(start + 2, next);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd < 0) throw new HttpFailure(httpError(400, 'a multipart part has no header block'));
    const headers = new Map(
      part
        .subarray(0, headerEnd)
        .toString('utf8')
        .split('\r\n')
        .map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as const),
    );
    const disposition = headers.get('content-disposition') ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) throw new HttpFailure(httpError(400, 'a multipart part has no form field name'));
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    parts.push({ name, data: part.subarray(headerEnd + 4), ...(filename !== undefined ? { filename } : {}), ...(headers.has('content-type') ? { contentType: headers.get('content-type') } : {}) });
    start = next + 2;
  }
}
