import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { ErrorCode, TrellisError } from '@trellis/contracts';
import { FetchAllowList, internalReason } from './address-policy';

export interface UrlFetchLimits {
  /** Whole fetch, every redirect and the body included. */
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  /** Largest body, after any content decoding. */
  readonly maxBytes: number;
  /** TRELLIS_URL_FETCH_ALLOW entries: internal destinations that may be fetched anyway. */
  readonly allow: readonly string[];
}

export interface FetchedDocument {
  readonly bytes: Uint8Array;
  readonly mimeType: string;
  /** The URL that answered, after redirects. */
  readonly url: URL;
  /** The response's validators, for a conditional request next time ('' when absent). */
  readonly etag: string;
  readonly lastModified: string;
}

/** What a conditional fetch may send: the validators of the copy already held. */
export interface CachedCopy {
  readonly etag?: string;
  readonly lastModified?: string;
}

/** The server said the copy held is current (HTTP 304). */
export interface NotModified {
  readonly notModified: true;
  readonly url: URL;
}

/** A fetch answered with a status that is neither success nor redirect. */
export class HttpStatusError extends TrellisError {
  constructor(
    readonly status: number,
    url: URL,
  ) {
    super(ErrorCode.FailedPrecondition, `fetching ${url.href} returned HTTP ${status}`);
  }
}

type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** How Trellis names itself to web servers, and the token robots.txt rules address. */
export const USER_AGENT = 'trellis-url-fetch';

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/**
 * Fetches a URL for AddDocumentFromUrl without letting it reach inside the deployment.
 * The host is resolved, and every address it resolves to must be public (or allow-listed):
 * loopback, private, link-local, carrier-grade NAT, multicast, unspecified and metadata
 * addresses are refused, for IPv4 and IPv6 (IPv4-mapped forms included). The connection is
 * made to the address that was checked (a custom lookup on the request), so a DNS answer
 * that changes between check and connect (rebinding) cannot redirect it. Redirects are
 * followed by hand, each target checked the same way, at most `maxRedirects` of them; one
 * deadline covers all of it, the body included.
 */
export class UrlFetcher {
  private readonly allowList: FetchAllowList;

  constructor(
    private readonly limits: UrlFetchLimits,
    private readonly resolve: Resolver = systemResolver,
  ) {
    this.allowList = new FetchAllowList(limits.allow);
  }

  async fetch(start: URL): Promise<FetchedDocument> {
    const result = await this.fetchIfChanged(start, {});
    if ('notModified' in result) throw new HttpStatusError(304, result.url);
    return result;
  }

  /**
   * The document, or NotModified when the server confirms (HTTP 304) that `copy` is current:
   * the copy's ETag goes out as If-None-Match and its Last-Modified as If-Modified-Since.
   */
  async fetchIfChanged(start: URL, copy: CachedCopy): Promise<FetchedDocument | NotModified> {
    const conditions: Record<string, string> = {};
    if (copy.etag) conditions['if-none-match'] = copy.etag;
    if (copy.lastModified) conditions['if-modified-since'] = copy.lastModified;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.limits.timeoutMs);
    try {
      let url = start;
      for (let redirects = 0; ; redirects++) {
        const response = await this.request(url, controller.signal, conditions);
        const location = response.headers.location;
        if (response.statusCode !== undefined && response.statusCode >= 300 && response.statusCode < 400 && location !== undefined) {
          response.resume();
          if (redirects >= this.limits.maxRedirects) {
            throw new TrellisError(ErrorCode.FailedPrecondition, `fetching ${start.href} redirected more than ${this.limits.maxRedirects} times (TRELLIS_URL_FETCH_MAX_REDIRECTS)`);
          }
          url = redirectTarget(url, location);
          continue;
        }
        if (response.statusCode === 304 && Object.keys(conditions).length > 0) {
          response.resume();
          return { notModified: true, url };
        }
        if (response.statusCode === undefined || response.statusCode < 200 || response.statusCode >= 300) {
          response.resume();
          throw new HttpStatusError(response.statusCode ?? 0, url);
        }
        const bytes = await readBody(url, response, this.limits.maxBytes, controller.signal);
        const header = (name: string) => String(response.headers[name] ?? '').slice(0, 200);
        return { bytes, mimeType: String(response.headers['content-type'] ?? ''), url, etag: header('etag'), lastModified: header('last-modified') };
      }
    } catch (error) {
      // Whatever failed after the deadline failed because of it.
      if (controller.signal.aborted) {
        throw new TrellisError(ErrorCode.DeadlineExceeded, `fetching ${start.href} took longer than ${this.limits.timeoutMs} ms (TRELLIS_URL_FETCH_TIMEOUT_MS)`);
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The public (or allowed) address to connect to for `url`, or a refusal. */
  async checkedAddress(url: URL, signal?: AbortSignal): Promise<LookupAddress> {
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    const hostAllowed = this.allowList.allowsHost(hostname);
    let addresses: LookupAddress[];
    if (isIP(hostname) !== 0) addresses = [{ address: hostname, family: isIP(hostname) }];
    else {
      try {
        addresses = await untilAborted(this.resolve(hostname), signal);
      } catch (error) {
        throw new TrellisError(ErrorCode.FailedPrecondition, `could not fetch ${url.href}: ${hostname} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      }
    }
    if (addresses.length === 0) throw new TrellisError(ErrorCode.FailedPrecondition, `could not fetch ${url.href}: ${hostname} has no address`);
    // Every address must pass: a host with one internal address is refused, whichever would be used.
    for (const { address } of addresses) {
      const reason = internalReason(address);
      if (reason !== null && !hostAllowed && !this.allowList.allowsAddress(address)) {
        throw TrellisError.invalid(`refusing to fetch ${url.href}: ${hostname} is ${address}, ${reason}; an operator can allow it with TRELLIS_URL_FETCH_ALLOW`);
      }
    }
    return addresses[0]!;
  }

  private async request(url: URL, signal: AbortSignal, conditions: Record<string, string>): Promise<IncomingMessage> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw TrellisError.invalid(`only http and https URLs can be fetched (got ${url.protocol} from ${url.href})`);
    const target = await this.checkedAddress(url, signal);
    // Connect to the address just checked, never to a second DNS answer.
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [target]);
      else callback(null, target.address, target.family);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(url, { method: 'GET', lookup, signal, headers: { 'accept-encoding': 'gzip, deflate, br', 'user-agent': USER_AGENT, ...conditions }, agent: false }, resolve);
      req.on('error', (error) => reject(signal.aborted ? error : new TrellisError(ErrorCode.FailedPrecondition, `could not fetch ${url.href}: ${error.message}`)));
      req.end();
    });
  }
}

/** `work`, or a rejection as soon as `signal` aborts (a DNS lookup cannot itself be cancelled). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

function redirectTarget(from: URL, location: string): URL {
  try {
    return new URL(location, from);
  } catch {
    throw new TrellisError(ErrorCode.FailedPrecondition, `fetching ${from.href} redirected to an invalid URL "${location}"`);
  }
}

/** The body, decoded (gzip, deflate, br), refused past `maxBytes` of decoded bytes. */
async function readBody(url: URL, response: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
  const tooLarge = () => new TrellisError(ErrorCode.ResourceExhausted, `the document at ${url.href} is larger than the upload limit of ${maxBytes} bytes (TRELLIS_MAX_UPLOAD_BYTES)`);
  const encoding = String(response.headers['content-encoding'] ?? 'identity').toLowerCase();
  const decoders: Record<string, () => Readable & NodeJS.WritableStream> = { gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate, br: createBrotliDecompress };
  const decoder = decoders[encoding];
  if (decoder === undefined && encoding !== 'identity') {
    response.destroy();
    throw new TrellisError(ErrorCode.FailedPrecondition, `${url.href} answered with content encoding "${encoding}", which is not supported`);
  }
  if (encoding === 'identity' && Number(response.headers['content-length'] ?? '0') > maxBytes) {
    response.destroy();
    throw tooLarge();
  }
  const body: Readable = decoder === undefined ? response : response.pipe(decoder());
  const stop = () => body.destroy(new Error('aborted'));
  signal.addEventListener('abort', stop, { once: true });
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const part of body) {
      size += (part as Buffer).byteLength;
      if (size > maxBytes) throw tooLarge();
      parts.push(part as Buffer);
    }
  } catch (error) {
    if (error instanceof TrellisError || signal.aborted) throw error;
    throw new TrellisError(ErrorCode.FailedPrecondition, `could not read the body of ${url.href}: ${(error as Error).message}`);
  } finally {
    signal.removeEventListener('abort', stop);
    response.destroy();
    if (body !== response) body.destroy();
  }
  return Buffer.concat(parts);
}
