import { ErrorCode, TrellisError } from '@trellis/contracts';
import { EmbedderInFront } from './embedding-provider';
import type { EmbeddingProvider } from './embedding-provider';

export interface CoalescingLimits {
  /** Texts in one request to the model. */
  readonly maxTexts: number;
  /** Requests to the model at once; callers beyond them wait, and are packed together. */
  readonly maxInFlight: number;
}

interface Caller {
  readonly texts: readonly string[];
  readonly vectors: Float32Array[];
  owed: number;
  failed: boolean;
  resolve(vectors: Float32Array[]): void;
  reject(error: unknown): void;
}

/** One text of one caller, waiting for a request. */
interface Owed {
  readonly caller: Caller;
  readonly index: number;
}

/**
 * Packs the texts of concurrent callers into shared requests to the model. Indexing embeds a
 * few texts per chunk from many handlers at once (a chunk, then its entities' headings and
 * descriptions); sent one request per call, that is two or more requests per chunk against an
 * embedding API's requests-per-minute limit. Here callers of the same turn of the event loop
 * share a request, at most `maxInFlight` requests run at once, and callers arriving meanwhile
 * wait and share the next one. A text asked for twice in one request is sent once.
 *
 * A request the model rejects (FAILED_PRECONDITION: a text too long, a wrong dimension) is sent
 * again per caller, so one caller's bad text fails only that caller. Any other failure
 * (UNAVAILABLE after the client's retries) fails every caller in the request.
 */
export class CoalescingEmbedder extends EmbedderInFront {
  private readonly waiting: Owed[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    inner: EmbeddingProvider,
    private readonly limits: CoalescingLimits,
  ) {
    super(inner);
    if (limits.maxTexts < 1 || limits.maxInFlight < 1) throw new RangeError('CoalescingEmbedder needs at least one text and one request');
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const caller: Caller = { texts, vectors: new Array<Float32Array>(texts.length), owed: texts.length, failed: false, resolve, reject };
      for (let index = 0; index < texts.length; index++) this.waiting.push({ caller, index });
      this.schedule();
    });
  }

  /** Sends on the next turn of the event loop, so the callers of this turn share a request. */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.limits.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.inFlight < this.limits.maxInFlight) {
      const request = this.nextRequest();
      if (request.length === 0) return;
      void this.send(request, true);
    }
  }

  /** Up to `maxTexts` distinct texts from the head of the line, skipping callers that already failed. */
  private nextRequest(): Owed[] {
    const request: Owed[] = [];
    const distinct = new Set<string>();
    let taken = 0;
    while (taken < this.waiting.length) {
      const owed = this.waiting[taken]!;
      const text = owed.caller.texts[owed.index]!;
      if (!distinct.has(text) && distinct.size === this.limits.maxTexts) break;
      taken++;
      if (owed.caller.failed) continue;
      distinct.add(text);
      request.push(owed);
    }
    this.waiting.splice(0, taken);
    return request;
  }

  private async send(request: readonly Owed[], shared: boolean): Promise<void> {
    this.inFlight++;
    try {
      const texts = [...new Set(request.map((o) => o.caller.texts[o.index]!))];
      const vectors = await this.inner.embed(texts);
      if (vectors.length !== texts.length) {
        throw new TrellisError(ErrorCode.Unavailable, `embedding model ${this.inner.model} returned ${vectors.length} vectors for ${texts.length} texts`);
      }
      const byText = new Map(texts.map((text, i) => [text, vectors[i]!]));
      for (const { caller, index } of request) {
        if (caller.failed) continue;
        caller.vectors[index] = byText.get(caller.texts[index]!)!;
        if (--caller.owed === 0) caller.resolve(caller.vectors);
      }
    } catch (error) {
      const callers = [...new Set(request.map((o) => o.caller))].filter((c) => !c.failed);
      if (shared && callers.length > 1 && isRejection(error)) {
        await Promise.all(callers.map((caller) => this.send(request.filter((o) => o.caller === caller), false)));
      } else {
        for (const caller of callers) {
          caller.failed = true;
          caller.reject(error);
        }
      }
    } finally {
      this.inFlight--;
      this.dispatch();
    }
  }
}

function isRejection(error: unknown): boolean {
  return error instanceof TrellisError && error.code === ErrorCode.FailedPrecondition;
}
