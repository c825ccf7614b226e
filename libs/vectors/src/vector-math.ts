export function vectorToBuffer(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function bufferToVector(buffer: Buffer): Float32Array {
  // Copy: the driver may reuse the buffer, and Float32Array needs 4-byte alignment.
  const copy = new Uint8Array(buffer.byteLength);
  copy.set(buffer);
  return new Float32Array(copy.buffer);
}

/** Keeps the k best items seen; cheaper than sorting everything when k is small. */
export class TopK<T> {
  private readonly items: Array<{ item: T; score: number }> = [];

  constructor(private readonly k: number) {}

  offer(item: T, score: number): void {
    if (this.items.length < this.k) {
      this.items.push({ item, score });
      if (this.items.length === this.k) this.items.sort((a, b) => b.score - a.score);
      return;
    }
    const last = this.items[this.items.length - 1];
    if (last === undefined || score <= last.score) return;
    let i = this.items.length - 1;
    while (i > 0 && this.items[i - 1]!.score < score) i--;
    this.items.splice(i, 0, { item, score });
    this.items.pop();
  }

  result(): Array<{ item: T; score: number }> {
    return [...this.items].sort((a, b) => b.score - a.score);
  }
}
