import { forEngine } from './table-spec';
import type { ColumnSpec, Engine, PerEngine, TableSpec } from './table-spec';
import { ID, INT, JSON_TEXT, TEXT, TIME, varchar } from './table-spec';
import { TABLES } from './tables';
import { CHAT_TITLE_CHARS } from '../chat-sql';

/**
 * Migration 19's FTS5 table (dropped by 23): one row per chunk, its text and, in `kb`, one token
 * of its tenant and knowledge base, hex-encoded so the tokenizer keeps it whole.
 */
const CHUNK_FTS_19 = "CREATE VIRTUAL TABLE chunk_fts USING fts5 (chunk_id UNINDEXED, text, kb, tokenize = 'porter unicode61')";
const KB_TOKEN_19 = "('k' || lower(hex(tenant_id)) || 'z' || lower(hex(kb_id)))";

/**
 * The numbered migrations of both engines, derived from the one table description: migration N
 * creates the tables, and adds the columns and indexes, whose `since` is N on that engine, with
 * the data steps written here around them. A migration with nothing to do on an engine is not
 * listed for it (the MySQL family has no 10 and 11). Applied migrations are recorded by number,
 * so what an existing database applied is never re-run; a change to the schema is a new number.
 */
interface Migration {
  version: number;
  name: string;
  /** Statements before the generated DDL, and after it (data copies, backfills). */
  before?: PerEngine<readonly string[]>;
  after?: PerEngine<readonly string[]>;
}

const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial schema', after: { sqlite: ["CREATE VIRTUAL TABLE chunk_fts USING fts5 (chunk_id UNINDEXED, text, tokenize = 'porter unicode61')"], mysql: [] } },
  { version: 2, name: 'entity names derived from their mentions' },
  { version: 3, name: 'pipeline stages per document version' },
  { version: 4, name: 'LLM usage per document version and the shared LLM call budget' },
  { version: 5, name: 'summaries recomputed from their inputs; entities to review' },
  { version: 6, name: 'manual graph edits: overlays, merges, replayable chunk writes, edit log' },
  { version: 7, name: 'chunks by content hash, to resolve re-indexed text as before' },
  // Entries without a tenant cannot be attributed to one: they are dropped (a cache; the next
  // extraction of the same text refills it).
  { version: 8, name: 'extraction cache per tenant and knowledge base', before: ['DROP TABLE IF EXISTS extraction_cache'] },
  {
    version: 9,
    name: 'chunks remaining per document version',
    // See sql/chunk-progress-sql.ts. Documents indexed before are counted once here (safe to run again).
    after: [
      `UPDATE documents AS d SET chunks_remaining = (SELECT COUNT(*) FROM chunks c WHERE c.tenant_id = d.tenant_id AND c.kb_id = d.kb_id
         AND c.document_id = d.id AND c.version = d.version AND c.status <> 'graphed')`,
    ],
  },
  { version: 10, name: 'indexed text length per chunk, kept by the shared chunk writes' },
  {
    version: 11,
    name: 'document text in parts and documents by source hash, as the shared SQL keeps them',
    // trellis_source_hash is registered by migrateSqlite: the store's own hash of the URI.
    after: {
      sqlite: [
        'INSERT INTO document_texts (tenant_id, kb_id, document_id, version, part, text) SELECT tenant_id, kb_id, document_id, version, 0, text FROM document_versions',
        'DROP TABLE document_versions',
        'UPDATE documents SET source_hash = trellis_source_hash(source_uri)',
      ],
      mysql: [],
    },
  },
  {
    version: 12,
    name: 'status change times of chunks and re-drive counts of documents, for the sweeper',
    // Chunks written before count as changed now: the sweeper waits one timeout before touching them.
    after: { sqlite: ["UPDATE chunks SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"], mysql: ['UPDATE chunks SET updated_at = UTC_TIMESTAMP(3)'] },
  },
  { version: 13, name: 'communities of the entity graph, their members and reports, and when each knowledge base last needed a refresh' },
  {
    version: 14,
    name: 'conversations listed per tenant, and the condensed question of each follow-up',
    // Conversations saved before are listed too: titled by their first question.
    after: [
      `INSERT INTO chats (tenant_id, id, kb_id, title, engine, message_count, created_at, updated_at)
         SELECT m.tenant_id, m.chat_id, m.kb_id, SUBSTR(m.content, 1, ${CHAT_TITLE_CHARS}), '',
           (SELECT COUNT(*) FROM chat_messages c WHERE c.tenant_id = m.tenant_id AND c.chat_id = m.chat_id), m.created_at,
           (SELECT MAX(c.created_at) FROM chat_messages c WHERE c.tenant_id = m.tenant_id AND c.chat_id = m.chat_id)
         FROM chat_messages m WHERE m.id = (SELECT MIN(f.id) FROM chat_messages f WHERE f.tenant_id = m.tenant_id AND f.chat_id = m.chat_id)`,
    ],
  },
  { version: 15, name: 'chat engines: named chat configurations per tenant' },
  { version: 16, name: 'entities changed since the last community refresh, for refreshes local to the change' },
  { version: 17, name: 'LLM spend per knowledge base, day and purpose, and chunks paused by a knowledge base budget' },
  { version: 18, name: 'events written with the changes they announce, until published (transactional outbox)' },
  {
    version: 19,
    name: 'full text ranked on the index alone: SQLite FTS scoped by knowledge base, postings with their chunk length',
    // FTS5 tables take no new column: the index is built again from the chunks.
    // The MySQL family's postings get their chunk's length (see fulltext-index.ts).
    after: {
      sqlite: [
        'DROP TABLE IF EXISTS chunk_fts',
        CHUNK_FTS_19,
        `INSERT INTO chunk_fts (chunk_id, text, kb) SELECT id, CASE WHEN heading <> '' THEN heading || char(10) || text ELSE text END, ${KB_TOKEN_19} FROM chunks`,
      ],
      mysql: ['UPDATE chunk_terms t JOIN chunks c ON c.tenant_id = t.tenant_id AND c.kb_id = t.kb_id AND c.id = t.chunk_id SET t.fts_length = c.fts_length'],
    },
  },
  // Documents indexed before have no title until they are indexed again (trellis reindex).
  { version: 20, name: 'document titles and their keys, for retrieval to find the page about a name' },
  {
    version: 21,
    name: 'the words of entity names, to find entities by name as index ranges',
    // The words of the entities written before: trellis_name_terms is registered by migrateSqlite
    // (entityNameTerms as a table-valued function); the MySQL family has no such functions and
    // runs backfillEntityNameTerms from the migrator instead (mysql-schema.ts).
    after: {
      sqlite: ['INSERT OR IGNORE INTO entity_name_terms (tenant_id, kb_id, term, entity_id) SELECT e.tenant_id, e.kb_id, t.term, e.id FROM entities e, trellis_name_terms(e.normalized_name) t'],
      mysql: [],
    },
  },
  { version: 22, name: "relationships' edges (ends, weight, id) read from their endpoint indexes alone" },
  {
    version: 23,
    name: "SQLite's full text in memory, built from the chunks' text: the FTS5 table goes",
    after: { sqlite: ['DROP TABLE IF EXISTS chunk_fts'], mysql: [] },
  },
  {
    version: 24,
    name: "the MySQL family's full text analysed as the standalone store's (Porter stems, every word): postings rebuilt from the chunks",
    // The postings go, then reanalyseChunkTexts (mysql-schema.ts) writes them again from the text.
    before: { sqlite: [], mysql: ['TRUNCATE TABLE chunk_terms', 'DELETE FROM kb_text_stats'] },
  },
  { version: 25, name: 'memberships, budget-paused chunks and (SQLite) entity mentions found by entity and by document through indexes of their own' },
  { version: 26, name: "an entity's heaviest relationships first in its endpoint indexes, so a walk reads only the edges it keeps" },
  { version: 27, name: "(SQLite) entities' names and mention counts read from an index of their own, not from rows with their embeddings" },
];

/** Tables of the past that migrations above still create before they remove them. */
const RETIRED_TABLES: readonly TableSpec[] = [
  // SQLite's first home of document text; migration 11 moves it to document_texts.
  { name: 'document_versions', only: 'sqlite', columns: { document_id: ID, version: INT, tenant_id: ID, kb_id: ID, text: TEXT }, primaryKey: ['document_id', 'version'] },
  // The tenant-less extraction cache; migration 8 replaces it.
  { name: 'extraction_cache', columns: { cache_key: varchar(191), result: JSON_TEXT, created_at: TIME }, primaryKey: ['cache_key'] },
];

export interface ResolvedIndex {
  name: string;
  columns: readonly string[];
  unique: boolean;
  where?: string;
}

/** A table as one engine has it after one migration. */
export interface ResolvedTable {
  name: string;
  columns: ReadonlyArray<[string, ColumnSpec]>;
  primaryKey: readonly string[];
  indexes: readonly ResolvedIndex[];
}

/** One engine's DDL for the description. */
export interface DdlRenderer {
  readonly engine: Engine;
  createTable(table: ResolvedTable): string[];
  /** Columns and indexes added to an existing table, and the indexes it no longer has. */
  addToTable(table: string, columns: ReadonlyArray<[string, ColumnSpec]>, indexes: readonly ResolvedIndex[], dropped: readonly string[]): string[];
}

export interface RenderedMigration {
  version: number;
  name: string;
  statements: string[];
}

const present = (engine: Engine) => (x: { only?: Engine }) => x.only === undefined || x.only === engine;

/** The table as `engine` has it once migration `version` ran: what `since` includes. */
export function resolveTable(table: TableSpec, engine: Engine, version = Number.POSITIVE_INFINITY, exactly = false): ResolvedTable {
  const born = forEngine(table.since ?? 1, engine);
  const included = (since: PerEngine<number> | undefined) => {
    const v = Math.max(born, since === undefined ? born : forEngine(since, engine));
    return exactly ? v === version : v <= version;
  };
  return {
    name: table.name,
    columns: Object.entries(table.columns).filter(([, c]) => included(c.since)),
    primaryKey: forEngine(table.primaryKey, engine),
    indexes: (table.indexes ?? [])
      .filter(present(engine))
      .filter((i) => included(i.since) && (i.until === undefined || forEngine(i.until, engine) > version))
      .map((i) => ({ name: i.name, columns: forEngine(i.columns, engine), unique: i.unique === true, ...(i.where === undefined ? {} : { where: i.where }) })),
  };
}

/** Every migration `renderer`'s engine runs, in order, as statements. */
export function renderMigrations(renderer: DdlRenderer): RenderedMigration[] {
  const tables = [...RETIRED_TABLES, ...TABLES].filter(present(renderer.engine));
  const rendered = MIGRATIONS.map((m) => {
    const statements = [...forEngine(m.before ?? [], renderer.engine)];
    for (const table of tables) {
      const born = forEngine(table.since ?? 1, renderer.engine);
      if (born === m.version) statements.push(...renderer.createTable(resolveTable(table, renderer.engine, m.version)));
      if (born >= m.version) continue;
      const added = resolveTable(table, renderer.engine, m.version, true);
      const dropped = droppedIndexes(table, renderer.engine, m.version);
      if (added.columns.length > 0 || added.indexes.length > 0 || dropped.length > 0) statements.push(...renderer.addToTable(table.name, added.columns, added.indexes, dropped));
    }
    statements.push(...forEngine(m.after ?? [], renderer.engine));
    return { version: m.version, name: m.name, statements };
  });
  return rendered.filter((m) => m.statements.length > 0);
}

/** The names of the table's indexes that migration `version` drops on `engine`. */
function droppedIndexes(table: TableSpec, engine: Engine, version: number): string[] {
  return (table.indexes ?? []).filter((i) => present(engine)(i) && i.until !== undefined && forEngine(i.until, engine) === version).map((i) => i.name);
}
