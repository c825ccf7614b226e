import type { SqlSession } from '../sql/sql-session';

/**
 * A term in more than this share of the FTS5 table's rows is common. FTS5's BM25 computes a
 * phrase's IDF as ln((N - n + 0.5) / (n + 0.5)) and clamps it to 1e-6 where that is not
 * positive, that is from n = N / 2 on: such a term adds at most a few millionths to any
 * score, yet its postings are most of what a search reads. The share is above one half by
 * twice DRIFT, so a frequency counted before the table moved by DRIFT is still past N / 2.
 */
const COMMON_SHARE = 0.52;

/** Counted frequencies are kept until the rows, or the rows written, move by this share of N. */
const DRIFT = 0.01;

/** Counts kept at most; past it the cache starts again (queries' terms are an open set). */
const MAX_TERMS = 50_000;

/**
 * Which of a query's terms are common in the FTS5 table `chunk_fts`, by document frequencies
 * counted once per term and kept while the table stays within DRIFT of the size they were
 * counted at. N and every n are the table's (all knowledge bases'), as BM25 uses them. One
 * per store: writes in this process (`written`) and the row count read before every lookup
 * (another process's writes) both expire the counts.
 */
export class Fts5CommonTerms {
  private readonly frequencies = new Map<string, number>();
  private countedAt = 0;
  private writtenSince = 0;

  /** Rows inserted or deleted by this process since the counts were taken. */
  written(rows: number): void {
    this.writtenSince += rows;
  }

  /** The terms of `terms` in at least COMMON_SHARE of the table's rows. */
  async common(session: SqlSession, terms: readonly string[]): Promise<Set<string>> {
    const rows = await rowCount(session);
    if (Math.abs(rows - this.countedAt) > this.countedAt * DRIFT || this.writtenSince > this.countedAt * DRIFT || this.frequencies.size > MAX_TERMS) {
      this.frequencies.clear();
      this.countedAt = rows;
      this.writtenSince = 0;
    }
    const common = new Set<string>();
    for (const term of terms) {
      let n = this.frequencies.get(term);
      if (n === undefined) {
        n = Number((await session.rows(`SELECT count(*) AS n FROM chunk_fts WHERE chunk_fts MATCH ?`, [`text : "${term}"`]))[0]?.n ?? 0);
        this.frequencies.set(term, n);
      }
      if (n >= this.countedAt * COMMON_SHARE) common.add(term);
    }
    return common;
  }
}

/**
 * The table's row count, N of BM25, from FTS5's averages record (rowid 1 of `chunk_fts_data`,
 * a varint of the row count before the per-column token totals): one row read, where
 * `count(*)` would read every row's text.
 */
async function rowCount(session: SqlSession): Promise<number> {
  const block = (await session.rows('SELECT block FROM chunk_fts_data WHERE id = 1'))[0]?.block;
  return block instanceof Uint8Array ? sqliteVarint(block) : 0;
}

/** SQLite's varint: big-endian groups of seven bits, the high bit set on all but the last; a ninth byte counts all eight. */
export function sqliteVarint(bytes: Uint8Array): number {
  let value = 0;
  for (let i = 0; i < Math.min(9, bytes.length); i++) {
    const byte = bytes[i]!;
    if (i === 8) return value * 256 + byte;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return value;
  }
  return value;
}
