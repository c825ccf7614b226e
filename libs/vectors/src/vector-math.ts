export function vectorToBuffer(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function bufferToVector(buffer: Buffer): Float32Array {
  // Copy: the driver may reuse the buffer, and Float32Array needs 4-byte alignment.
  const copy = new Uint8Array(buffer.byteLength);
  copy.set(buffer);
  return new Float32Array(copy.buffer);
}

/**
 * Keeps the k best items seen, by score; cheaper than sorting everything when k is small. Equal
 * scores rank by `before` when given (which of two items comes first), else in the order offered.
 */
export class TopK<T> {
  private readonly items: Array<{ item: T; score: number }> = [];

  constructor(
    private readonly k: number,
    private readonly before: (a: T, b: T) => boolean = () => false,
  ) {}

  /**
   * The score an item must reach to be kept: −∞ while fewer than k are held (+∞ when k is 0). A
   * scan can skip the offer of anything below it; an equal score may still rank above by `before`.
   */
  get floor(): number {
    if (this.items.length < this.k) return -Infinity;
    return this.items[this.items.length - 1]?.score ?? Infinity;
  }

  offer(item: T, score: number): void {
    if (this.items.length < this.k) {
      this.items.push({ item, score });
      if (this.items.length === this.k) this.items.sort(this.order);
      return;
    }
    const last = this.items[this.items.length - 1];
    // Rejected before anything is allocated: a scan offers every row and keeps a handful.
    if (last === undefined || !this.beats(item, score, last)) return;
    const offered = { item, score };
    let i = this.items.length - 1;
    while (i > 0 && this.ranksAbove(offered, this.items[i - 1]!)) i--;
    this.items.splice(i, 0, offered);
    this.items.pop();
  }

  result(): Array<{ item: T; score: number }> {
    return [...this.items].sort(this.order);
  }

  private ranksAbove(a: { item: T; score: number }, b: { item: T; score: number }): boolean {
    return this.beats(a.item, a.score, b);
  }

  private beats(item: T, score: number, other: { item: T; score: number }): boolean {
    return score > other.score || (score === other.score && this.before(item, other.item));
  }

  private readonly order = (a: { item: T; score: number }, b: { item: T; score: number }): number => (this.ranksAbove(a, b) ? -1 : this.ranksAbove(b, a) ? 1 : 0);
}
