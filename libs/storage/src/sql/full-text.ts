import type { KbScope } from '@trellis/contracts';
import type { DocumentTerms } from '@trellis/text-search';
import type { ChunkFilter } from '../records';
import type { SqlSession } from './sql-session';
import type { Scored } from './vector-ranking';

/**
 * A chunk's text as the full-text index takes it, analysed outside the write transaction: its
 * length is kept in chunks.fts_length. Empty terms and length 0 where the index analyses the
 * text itself.
 */
export interface AnalyzedText extends DocumentTerms {
  /** Heading and body, as indexed. */
  text: string;
}

/**
 * Full-text search over current chunks, with one analysis and one ranking (@trellis/text-search:
 * the Porter terms SQLite's FTS5 made, Okapi BM25): on SQLite an inverted index in the store's
 * process, built from the chunks' text (sqlite/in-memory-text-index.ts); on the MySQL family postings
 * written in the transactions that write and delete the chunks (mysql/fulltext-index.ts),
 * because self-hosted TiDB parses FULLTEXT and ignores it.
 */
export interface FullTextIndex {
  analyze(text: string): AnalyzedText;
  /** Replaces the index entries of these chunks; `previousLengths` are the lengths of those that existed. */
  replace(tx: SqlSession, scope: KbScope, texts: ReadonlyMap<string, AnalyzedText>, previousLengths: ReadonlyMap<string, number>): Promise<void>;
  /** Drops the entries of deleted chunks; the map holds their indexed lengths. */
  remove(tx: SqlSession, scope: KbScope, removedLengths: ReadonlyMap<string, number>): Promise<void>;
  /** Drops every entry of the knowledge base; runs before its chunks are deleted. */
  removeKnowledgeBase(tx: SqlSession, scope: KbScope): Promise<void>;
  /** Called after writes to chunks or document versions of the knowledge base (committed or not), where the index is kept in this process. */
  changed?(kbId: string): void;
  /** The k best current chunks for the query, best first. */
  search(session: SqlSession, scope: KbScope, query: string, k: number, filter?: ChunkFilter): Promise<Scored[]>;
}

/** `text` with its heading, as both indexes see a chunk. */
export function indexedText(heading: string, text: string): string {
  return heading ? `${heading}\n${text}` : text;
}
