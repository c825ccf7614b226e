import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { stampDigest, TopK } from '@trellis/vectors';
import { BM25_B, BM25_K1, bm25Idf } from './bm25';
import type { DocumentTerms } from './document-terms';
import { PostingLists } from './posting-lists';

/** A chunk as the index takes it: its terms, its document (for filters) and what says it changed. */
export interface PostedChunk {
  readonly id: string;
  readonly documentId: string;
  readonly stamp: string;
  readonly terms: DocumentTerms;
}

export interface TextHit {
  readonly id: string;
  readonly score: number;
}

/** Postings added since the last compaction that make one worth it (or this share of the compacted ones). */
const MIN_RECENT_POSTINGS = 50_000;
const RECENT_SHARE = 0.25;
/** Removed chunks whose postings are still held that make a compaction worth it (or this share of the slots). */
const MIN_DEAD_SLOTS = 2_000;
const DEAD_SHARE = 0.25;
/** Postings a compaction rewrites between two turns of the event loop (a few milliseconds' worth). */
const POSTINGS_PER_TURN = 200_000;

/** A term of the dictionary as its own string: a slice of a chunk's text would keep the whole text alive. */
const own = (term: string): string => (term.length >= 13 ? Buffer.from(term, 'utf8').toString('utf8') : term);

/**
 * One knowledge base's chunks as an inverted index in memory, ranked by BM25 (bm25.ts) with the
 * document frequencies and average length of the chunks it holds. Each chunk has a slot; each
 * term (numbered in a dictionary) the slots it is in, with its count there. Postings live in one
 * compacted block (terms' ranges over two typed arrays, 6 bytes a posting) plus those added
 * since, in lists per term (posting-lists.ts, 10 bytes a posting); a
 * removed chunk's slot is marked dead and skipped until the next compaction rewrites the block
 * without it; a compaction yields to the event loop as it goes, and searches meanwhile read the
 * postings as they were (nothing else may change them until it ends). A search reads only its
 * terms' postings: a few milliseconds for a question whose terms are in 100k chunks, where
 * SQLite's FTS5 spent about 1 µs per match computing bm25().
 */
export class TextPostings {
  private ids: string[] = [];
  private documents: string[] = [];
  /** Each slot's stamp as its digest (stampDigest). */
  private stamps = new Float64Array(1024);
  private lengths = new Int32Array(1024);
  private alive = new Uint8Array(1024);
  private readonly slots = new Map<string, number>();
  private liveLength = 0;
  private dead = 0;
  /** Term → its number: those below offsets.length − 1 have compacted postings. */
  private termIds = new Map<string, number>();
  /** Compacted postings: term i's are slots[offsets[i] .. offsets[i + 1]) with their counts in tfs. */
  private offsets = new Int32Array(1);
  private postedSlots = new Int32Array(0);
  private postedTfs = new Uint16Array(0);
  /** Postings added since the last compaction. */
  private recent = new PostingLists();
  private scores = new Float64Array(0);
  /** Counts puts and removals: a compaction that saw one happen while it ran is dropped. */
  private mutations = 0;

  /** Chunks held. */
  get size(): number {
    return this.slots.size;
  }

  /** Whether the index holds the chunk `id` as of the stamp of this digest (stampDigest). */
  holds(id: string, digest: number): boolean {
    const slot = this.slots.get(id);
    return slot !== undefined && this.stamps[slot] === digest;
  }

  /** Ids of the chunks held. */
  chunkIds(): IterableIterator<string> {
    return this.slots.keys();
  }

  /** Adds the chunk, replacing what was held under its id. */
  put(chunk: PostedChunk): void {
    this.remove(chunk.id);
    this.mutations++;
    const slot = this.ids.length;
    if (slot === this.lengths.length) this.grow();
    this.ids.push(chunk.id);
    // A document's chunks come one after another: they share its id's string.
    const previous = this.documents.at(-1);
    this.documents.push(previous === chunk.documentId ? previous : chunk.documentId);
    this.stamps[slot] = stampDigest(chunk.stamp);
    this.lengths[slot] = chunk.terms.length;
    this.alive[slot] = 1;
    this.slots.set(chunk.id, slot);
    this.liveLength += chunk.terms.length;
    for (const [term, tf] of chunk.terms.frequencies) {
      let id = this.termIds.get(term);
      if (id === undefined) {
        id = this.termIds.size;
        this.termIds.set(own(term), id);
      }
      this.recent.add(id, slot, Math.min(tf, 0xffff));
    }
  }

  remove(id: string): void {
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    this.mutations++;
    this.alive[slot] = 0;
    this.slots.delete(id);
    this.liveLength -= this.lengths[slot]!;
    this.dead++;
  }

  /** Rewrites the postings without dead slots, once enough were added or removed since the last time. */
  async compactIfDue(): Promise<void> {
    const recentDue = this.recent.size > Math.max(MIN_RECENT_POSTINGS, RECENT_SHARE * this.postedSlots.length);
    const deadDue = this.dead > Math.max(MIN_DEAD_SLOTS, DEAD_SHARE * this.ids.length);
    if (recentDue || deadDue) await this.compact();
  }

  /**
   * The k chunks that score best for these terms (each with the times it counts), best first,
   * ties by id; only those of `documents` when given.
   *
   * Exact, without reading every posting of the common terms (MaxScore, Turtle and Flood): what a
   * term adds to a chunk's score is below its weight (idf · (k1 + 1) · times, as tf / (tf + K) < 1
   * for K > 0), so terms are read by weight, rarest first, and once the k-th best score so far is
   * above what the terms left could add to a chunk no term has reached yet, no such chunk can
   * enter. The terms left are then looked up only for the chunks that may still reach that score
   * (a search in the term's compacted postings, which are in slot order), not read through.
   */
  search(terms: ReadonlyMap<string, number>, k: number, documents?: ReadonlySet<string>): TextHit[] {
    const chunkCount = this.slots.size;
    if (chunkCount === 0 || k <= 0) return [];
    if (this.scores.length < this.ids.length) this.scores = new Float64Array(this.lengths.length);
    const scores = this.scores;
    const lengths = this.lengths;
    // tf·(k1+1) / (tf + k1·(1 − b + b·len/avgLen)), with the constant parts folded.
    const flat = BM25_K1 * (1 - BM25_B);
    const perLength = (BM25_K1 * BM25_B) / Math.max(1, this.liveLength / chunkCount);
    const weighted: Array<{ term: number; weight: number; df: number }> = [];
    for (const [text, times] of terms) {
      const term = this.termIds.get(text);
      const df = term === undefined ? 0 : this.liveCount(term);
      if (df > 0) weighted.push({ term: term!, weight: times * bm25Idf(df, chunkCount) * (BM25_K1 + 1), df });
    }
    weighted.sort((a, b) => b.weight - a.weight);
    // left[i]: the most terms i… can add to one chunk's score; unread[i]: their postings.
    const left = new Float64Array(weighted.length + 1);
    const unread = new Float64Array(weighted.length + 1);
    for (let i = weighted.length - 1; i >= 0; i--) {
      left[i] = left[i + 1]! + weighted[i]!.weight;
      unread[i] = unread[i + 1]! + weighted[i]!.df;
    }
    const touched: number[] = [];
    const allowed = (slot: number) => documents === undefined || documents.has(this.documents[slot]!);
    let next = 0;
    let floor = -Infinity;
    for (; next < weighted.length; next++) {
      // The k-th score costs a pass over the chunks touched: taken only while that is less than reading the rest.
      if (touched.length >= k && touched.length < unread[next]!) {
        floor = kthScore(touched, scores, k, allowed);
        if (floor > left[next]!) break;
      }
      const { term, weight } = weighted[next]!;
      this.eachPosting(term, (slot, tf) => {
        if (scores[slot] === 0) touched.push(slot);
        scores[slot]! += (weight * tf) / (tf + flat + perLength * lengths[slot]!);
      });
    }
    let candidates = touched;
    if (next < weighted.length) {
      candidates = touched.filter((slot) => allowed(slot) && scores[slot]! + left[next]! >= floor).sort((a, b) => a - b);
      // For the recent postings, read through: the candidates as a set, made once for every term.
      const wanted = this.recent.size > 0 ? new Set(candidates) : null;
      for (; next < weighted.length; next++) {
        const { term, weight } = weighted[next]!;
        this.eachPostingOf(term, candidates, wanted, (slot, tf) => {
          scores[slot]! += (weight * tf) / (tf + flat + perLength * lengths[slot]!);
        });
      }
    }
    const ids = this.ids;
    const best = new TopK<number>(k, (a, b) => ids[a]! < ids[b]!);
    for (const slot of candidates) if (allowed(slot)) best.offer(slot, scores[slot]!);
    for (const slot of touched) scores[slot] = 0;
    return best.result().map(({ item: slot, score }) => ({ id: ids[slot]!, score }));
  }

  /**
   * Calls `visit` for each of `slots` (live, in ascending order; `wanted` the same as a set, null
   * when no posting is recent) that holds the term, with its count there: compacted postings by a
   * galloping search from the last one found, recent ones (few, kept only until the next
   * compaction) read through.
   */
  private eachPostingOf(term: number, slots: readonly number[], wanted: ReadonlySet<number> | null, visit: (slot: number, tf: number) => void): void {
    if (term < this.offsets.length - 1) {
      const posted = this.postedSlots;
      const end = this.offsets[term + 1]!;
      let p = this.offsets[term]!;
      for (const slot of slots) {
        if (p >= end) break;
        // Gallop to a posting at or past the slot, then search the last step's range.
        let step = 1;
        let low = p;
        while (p + step < end && posted[p + step]! < slot) {
          low = p + step;
          step *= 2;
        }
        let high = Math.min(p + step, end);
        while (low < high) {
          const middle = (low + high) >>> 1;
          if (posted[middle]! < slot) low = middle + 1;
          else high = middle;
        }
        p = low;
        if (p < end && posted[p] === slot) visit(slot, this.postedTfs[p]!);
      }
    }
    if (wanted === null || this.recent.count(term) === 0) return;
    this.recent.each(term, (slot, tf) => {
      if (wanted.has(slot)) visit(slot, tf);
    });
  }

  /** Live chunks holding the term: its postings, counted one by one only while some are of removed chunks. */
  private liveCount(term: number): number {
    if (this.dead === 0) {
      const compacted = term < this.offsets.length - 1 ? this.offsets[term + 1]! - this.offsets[term]! : 0;
      return compacted + this.recent.count(term);
    }
    let df = 0;
    this.eachPosting(term, () => df++);
    return df;
  }

  /** Calls `visit` for each live slot holding the term, with its count there. */
  private eachPosting(term: number, visit: (slot: number, tf: number) => void): void {
    this.eachCompacted(term, visit);
    this.recent.each(term, (slot, tf) => {
      if (this.alive[slot] === 1) visit(slot, tf);
    });
  }

  /** The live ones of the term's compacted postings, in slot order. */
  private eachCompacted(term: number, visit: (slot: number, tf: number) => void): void {
    if (term >= this.offsets.length - 1) return;
    for (let p = this.offsets[term]!, end = this.offsets[term + 1]!; p < end; p++) {
      const slot = this.postedSlots[p]!;
      if (this.alive[slot] === 1) visit(slot, this.postedTfs[p]!);
    }
  }

  private grow(): void {
    const lengths = new Int32Array(this.lengths.length * 2);
    lengths.set(this.lengths);
    const alive = new Uint8Array(lengths.length);
    alive.set(this.alive);
    const stamps = new Float64Array(lengths.length);
    stamps.set(this.stamps);
    this.lengths = lengths;
    this.alive = alive;
    this.stamps = stamps;
  }

  /** Slots renumbered without the dead ones, and every term's postings in one block again. */
  async compact(): Promise<void> {
    const mutations = this.mutations;
    let sinceYield = 0;
    const pace = async (postings: number) => {
      sinceYield += postings;
      if (sinceYield < POSTINGS_PER_TURN) return;
      sinceYield = 0;
      await yieldToEventLoop();
    };
    const renumbered = new Int32Array(this.ids.length).fill(-1);
    const ids: string[] = [];
    const documents: string[] = [];
    const lengths = new Int32Array(Math.max(1024, this.slots.size * 2));
    const stamps = new Float64Array(lengths.length);
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (this.alive[slot] !== 1) continue;
      renumbered[slot] = ids.length;
      lengths[ids.length] = this.lengths[slot]!;
      stamps[ids.length] = this.stamps[slot]!;
      ids.push(this.ids[slot]!);
      documents.push(this.documents[slot]!);
    }
    // Terms no live chunk holds any more leave the dictionary; the others are numbered again.
    const termIds = new Map<string, number>();
    const formerIds = new Int32Array(this.termIds.size);
    const offsets = new Int32Array(this.termIds.size + 1);
    for (const [term, id] of this.termIds) {
      let n = 0;
      this.eachPosting(id, () => n++);
      await pace(n + 1);
      if (n === 0) continue;
      const next = termIds.size;
      termIds.set(term, next);
      formerIds[next] = id;
      offsets[next + 1] = offsets[next]! + n;
    }
    const postedSlots = new Int32Array(offsets[termIds.size]!);
    const postedTfs = new Uint16Array(postedSlots.length);
    for (let term = 0; term < termIds.size; term++) {
      const id = formerIds[term]!;
      // Compacted postings from the start of the term's range, recent ones (newest first) from its end: slot order.
      let p = offsets[term]!;
      this.eachCompacted(id, (slot, tf) => {
        postedSlots[p] = renumbered[slot]!;
        postedTfs[p++] = tf;
      });
      let end = offsets[term + 1]!;
      this.recent.each(id, (slot, tf) => {
        if (this.alive[slot] !== 1) return;
        postedSlots[--end] = renumbered[slot]!;
        postedTfs[end] = tf;
      });
      await pace(offsets[term + 1]! - offsets[term]! + 1);
    }
    if (this.mutations !== mutations) throw new Error('TextPostings changed while it was compacted');
    this.ids = ids;
    this.documents = documents;
    this.stamps = stamps;
    this.lengths = lengths;
    this.alive = new Uint8Array(lengths.length).fill(1, 0, ids.length);
    this.slots.clear();
    ids.forEach((id, slot) => this.slots.set(id, slot));
    this.dead = 0;
    this.termIds = termIds;
    this.offsets = offsets.slice(0, termIds.size + 1);
    this.postedSlots = postedSlots;
    this.postedTfs = postedTfs;
    this.recent = new PostingLists();
  }
}

/** The k-th best score among the touched slots `allowed` keeps (−∞ while fewer). */
function kthScore(touched: readonly number[], scores: Float64Array, k: number, allowed: (slot: number) => boolean): number {
  const best = new TopK<number>(k);
  for (const slot of touched) {
    // Most slots score below the k-th so far: passed over before the filter is asked.
    if (scores[slot]! > best.floor && allowed(slot)) best.offer(slot, scores[slot]!);
  }
  return best.floor;
}
