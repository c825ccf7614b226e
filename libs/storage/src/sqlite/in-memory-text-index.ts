import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { KbScope } from '@trellis/contracts';
import type { ChunkFilter } from '../records';
import { CURRENT_CHUNKS } from '../row-mappers';
import { indexedText } from '../sql/full-text';
import type { AnalyzedText, FullTextIndex } from '../sql/full-text';
import { rowsWhereIn } from '../sql/sql-session';
import type { Row, SqlSession } from '../sql/sql-session';
import { stampedRows } from '../sql/vector-ranking';
import type { Scored } from '../sql/vector-ranking';
import { porterDocumentTerms, porterQueryTerms, TextPostings } from '@trellis/text-search';
import type { PostedChunk } from '@trellis/text-search';

const NO_TERMS: ReadonlyMap<string, number> = new Map();

/** Chunks read and analysed at a time: about 20 ms of the event loop between two turns. */
const PAGE = 1_000;
/** Past this share of changed chunks a refresh reads every chunk (one pass) instead of those by id. */
const REFRESH_LIMIT = 0.5;

/** One knowledge base's index, and how far it has caught up with the writes announced for it. */
interface KbText {
  readonly scope: KbScope;
  postings: TextPostings;
  /** Generation of the last write announced for the knowledge base. */
  changedAt: number;
  /** Generation at which the last completed refresh began: it holds every write announced before. */
  appliedAt: number;
  refreshing?: Promise<void>;
}

const keyOf = (scope: KbScope) => `${scope.tenantId}\u0000${scope.kbId}`;

/**
 * The standalone store's full text: each knowledge base's current chunks as an inverted index in
 * this process (TextPostings), built from the chunks' stored text when first searched, and
 * brought up to date after writes from what changed. SQLite has one writer, this process, so a
 * write marks the index stale (`changed`) and the next search refreshes it: one read of the
 * current chunks' ids and content hashes, then the text of those that are new or changed, and
 * chunks gone are dropped. Its terms and BM25 (@trellis/text-search) are those of the FTS5
 * table it replaced, so it ranks as FTS5 did (every standalone quality figure before it was
 * measured with FTS5), an order of magnitude faster (docs/benchmarks.md). Nothing is written
 * with the chunks: their text is the index's only source, and a restart builds it again
 * (StoreWarmer does so in the background).
 */
export class InMemoryTextIndex implements FullTextIndex {
  private readonly kbs = new Map<string, KbText>();
  private generation = 0;

  /** `reads` serves the reads (the SQLite read threads); without it, the session a search is given. */
  constructor(private readonly reads?: SqlSession) {}

  analyze(text: string): AnalyzedText {
    return { text, length: 0, frequencies: NO_TERMS };
  }

  async replace(): Promise<void> {}

  async remove(): Promise<void> {}

  async removeKnowledgeBase(_tx: SqlSession, scope: KbScope): Promise<void> {
    this.kbs.delete(keyOf(scope));
  }

  /** Called after writes to chunks or document versions of the knowledge base, committed or not. */
  changed(kbId: string): void {
    this.generation++;
    for (const kb of this.kbs.values()) if (kb.scope.kbId === kbId) kb.changedAt = this.generation;
  }

  async search(session: SqlSession, scope: KbScope, query: string, k: number, filter?: ChunkFilter): Promise<Scored[]> {
    const terms = porterQueryTerms(query);
    const wanted = Math.floor(k);
    if (terms.size === 0 || wanted <= 0) return [];
    const postings = await this.current(session, scope);
    const documents = filter?.documentIds?.length ? new Set(filter.documentIds) : undefined;
    return postings.search(terms, wanted, documents).map((hit) => ({ item: hit.id, score: hit.score }));
  }

  /** Builds (or refreshes) the knowledge base's index now, as its next search would. */
  async preload(session: SqlSession, scope: KbScope): Promise<void> {
    await this.current(session, scope);
  }

  /** The index once it holds every write announced before this call: at most the refresh under way and one more. */
  private async current(session: SqlSession, scope: KbScope): Promise<TextPostings> {
    const key = keyOf(scope);
    let kb = this.kbs.get(key);
    if (kb === undefined) {
      kb = { scope, postings: new TextPostings(), changedAt: this.generation, appliedAt: -1 };
      this.kbs.set(key, kb);
    }
    const wanted = kb.changedAt;
    while (kb.appliedAt < wanted) {
      const state = kb;
      state.refreshing ??= this.refresh(this.reads ?? session, state).finally(() => (state.refreshing = undefined));
      await state.refreshing;
    }
    return kb.postings;
  }

  private async refresh(session: SqlSession, kb: KbText): Promise<void> {
    const generation = this.generation;
    const { tenantId, kbId } = kb.scope;
    // A first build reads every chunk anyway: the list of stamps would only be read for nothing.
    const current = kb.appliedAt < 0 ? undefined : await stampedRows(session, `SELECT c.id AS id, c.content_hash AS stamp FROM ${CURRENT_CHUNKS} WHERE c.tenant_id = ? AND c.kb_id = ?`, [tenantId, kbId]);
    const changed = current === undefined ? [] : current.ids.filter((id, i) => !kb.postings.holds(id, current.digests[i]!));
    if (current === undefined || changed.length > current.ids.length * REFRESH_LIMIT) {
      kb.postings = await readAll(session, kb.scope);
    } else {
      const read: PostedChunk[] = [];
      for (let start = 0; start < changed.length; start += PAGE) {
        const sql = (m: string) => `SELECT c.id AS id, c.content_hash AS stamp, c.document_id AS document_id, c.heading AS heading, c.text AS text FROM ${CURRENT_CHUNKS} WHERE c.tenant_id = ? AND c.kb_id = ? AND c.id IN (${m})`;
        read.push(...(await rowsWhereIn(session, sql, [tenantId, kbId], changed.slice(start, start + PAGE))).map(posted));
        await yieldToEventLoop();
      }
      // Applied at once, after every read: a search in between sees the index as it was.
      const present = new Set(current.ids);
      for (const id of [...kb.postings.chunkIds()]) if (!present.has(id)) kb.postings.remove(id);
      for (const chunk of read) kb.postings.put(chunk);
      await kb.postings.compactIfDue();
    }
    kb.appliedAt = generation;
  }
}

/** Every current chunk of the knowledge base, a page at a time in id order, into a new index. */
async function readAll(session: SqlSession, scope: KbScope): Promise<TextPostings> {
  const postings = new TextPostings();
  for (let after = 0; ; ) {
    // In rowid order, the table's own: on the knowledge base's index the planner sorts every
    // chunk of it for each page (0.6 s a page at 100k chunks).
    const rows = await session.rows(
      `SELECT c.rowid AS rid, c.id AS id, c.content_hash AS stamp, c.document_id AS document_id, c.heading AS heading, c.text AS text FROM ${CURRENT_CHUNKS}
       WHERE +c.tenant_id = ? AND +c.kb_id = ? AND c.rowid > ? ORDER BY c.rowid LIMIT ${PAGE}`,
      [scope.tenantId, scope.kbId, after],
    );
    for (const row of rows) postings.put(posted(row));
    if (rows.length < PAGE) {
      await postings.compact();
      return postings;
    }
    after = Number(rows.at(-1)!.rid);
    await yieldToEventLoop();
  }
}

function posted(row: Row): PostedChunk {
  return { id: String(row.id), documentId: String(row.document_id), stamp: String(row.stamp), terms: porterDocumentTerms(indexedText(String(row.heading ?? ''), String(row.text))) };
}
