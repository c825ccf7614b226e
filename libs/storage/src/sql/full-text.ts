import type { KbScope } from '@trellis/contracts';
import type { ChunkFilter } from '../records';
import type { SqlSession } from './sql-session';
import type { Scored } from './vector-ranking';

/** A chunk's text as the full-text index takes it, analysed outside the write transaction. */
export interface AnalyzedText {
  /** Heading and body, as indexed. */
  text: string;
  /** Indexed terms (BM25's document length), kept in chunks.fts_length; 0 where the engine counts itself. */
  length: number;
  /** Term → occurrences; empty where the engine tokenizes itself. */
  frequencies: ReadonlyMap<string, number>;
}

/**
 * Full-text search over current chunks, written in the transactions that write and delete the
 * chunks: SQLite's FTS5 (sqlite/fts5-index.ts), or an inverted index of our own on the MySQL
 * family (mysql/fulltext-index.ts), because self-hosted TiDB parses FULLTEXT and ignores it.
 */
export interface FullTextIndex {
  analyze(text: string): AnalyzedText;
  /** Replaces the index entries of these chunks; `previousLengths` are the lengths of those that existed. */
  replace(tx: SqlSession, scope: KbScope, texts: ReadonlyMap<string, AnalyzedText>, previousLengths: ReadonlyMap<string, number>): Promise<void>;
  /** Drops the entries of deleted chunks; the map holds their indexed lengths. */
  remove(tx: SqlSession, scope: KbScope, removedLengths: ReadonlyMap<string, number>): Promise<void>;
  /** Drops every entry of the knowledge base; runs before its chunks are deleted. */
  removeKnowledgeBase(tx: SqlSession, scope: KbScope): Promise<void>;
  /** The k best current chunks for the query, best first. */
  search(session: SqlSession, scope: KbScope, query: string, k: number, filter?: ChunkFilter): Promise<Scored[]>;
}

/** `text` with its heading, as both indexes see a chunk. */
export function indexedText(heading: string, text: string): string {
  return heading ? `${heading}\n${text}` : text;
}
