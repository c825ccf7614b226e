import type { IncomingMessage } from 'node:http';
import { httpError } from './http-status';
import type { HttpError } from './http-status';

/** A request the HTTP layer refuses before any gRPC call. */
export class HttpFailure extends Error {
  constructor(readonly http: HttpError) {
    super(http.detail);
  }
}

/** Largest JSON request body: the longest chat history the servers accept is 200 000 characters. */
export const MAX_JSON_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The request body, at most `limit` bytes. A declared Content-Length over the limit is refused
 * before a byte of the body is read; a chunked body stops being read the moment it passes it.
 * Either way the caller answers 413 with `Connection: close`, and the rest is never read.
 */
export async function readBody(req: IncomingMessage, limit: number, what: string): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw new HttpFailure(httpError(413, `${what} is larger than ${limit} bytes (Content-Length ${declared})`));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total <= limit) return void chunks.push(chunk);
      // Stop reading, but keep the socket: the 413 still has to reach the client.
      req.off('data', onData);
      req.pause();
      reject(new HttpFailure(httpError(413, `${what} is larger than ${limit} bytes`)));
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** The parsed JSON body; an empty body is `{}`. Syntax errors are a 400 with the position. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  const body = await readBody(req, MAX_JSON_BODY_BYTES, 'the JSON body');
  if (body.byteLength === 0) return {};
  if (type !== 'application/json' && !type.endsWith('+json')) throw new HttpFailure(httpError(415, `expected an application/json body, got ${type}`));
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new HttpFailure(httpError(400, `the body is not valid JSON: ${(error as Error).message}`));
  }
}
