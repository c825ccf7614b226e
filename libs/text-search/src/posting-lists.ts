/** Postings per page: 16,384 of them, 160 KB. */
const PAGE_BITS = 14;
const PAGE_SIZE = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_SIZE - 1;

/**
 * Postings appended term by term, each term's as a list threaded through pages of typed arrays:
 * 10 bytes a posting (slot, count, previous posting of the term), where arrays of numbers took
 * 16 and, as they grew, left as much again of garbage on the heap. Pages are allocated as
 * postings come, so nothing is copied to grow; a term's list is read newest first.
 */
export class PostingLists {
  private readonly slots: Int32Array[] = [];
  private readonly tfs: Uint16Array[] = [];
  private readonly previous: Int32Array[] = [];
  private heads = new Int32Array(1024).fill(-1);
  private counts = new Int32Array(1024);
  private total = 0;

  /** Postings held. */
  get size(): number {
    return this.total;
  }

  /** Postings held for the term. */
  count(term: number): number {
    return term < this.counts.length ? this.counts[term]! : 0;
  }

  add(term: number, slot: number, tf: number): void {
    if (term >= this.heads.length) this.growTerms(term + 1);
    const p = this.total++;
    const page = p >>> PAGE_BITS;
    if (page === this.slots.length) {
      this.slots.push(new Int32Array(PAGE_SIZE));
      this.tfs.push(new Uint16Array(PAGE_SIZE));
      this.previous.push(new Int32Array(PAGE_SIZE));
    }
    const at = p & PAGE_MASK;
    this.slots[page]![at] = slot;
    this.tfs[page]![at] = tf;
    this.previous[page]![at] = this.heads[term]!;
    this.heads[term] = p;
    this.counts[term]!++;
  }

  /** Calls `visit` with each posting of the term, newest first. */
  each(term: number, visit: (slot: number, tf: number) => void): void {
    for (let p = term < this.heads.length ? this.heads[term]! : -1; p >= 0; ) {
      const page = p >>> PAGE_BITS;
      const at = p & PAGE_MASK;
      visit(this.slots[page]![at]!, this.tfs[page]![at]!);
      p = this.previous[page]![at]!;
    }
  }

  private growTerms(wanted: number): void {
    const length = Math.max(wanted, this.heads.length * 2);
    const heads = new Int32Array(length).fill(-1);
    heads.set(this.heads);
    const counts = new Int32Array(length);
    counts.set(this.counts);
    this.heads = heads;
    this.counts = counts;
  }
}
