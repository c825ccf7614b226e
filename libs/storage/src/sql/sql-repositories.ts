import type { TrellisRepositories } from '../trellis-store';
import { SqlBudgetPauses } from './budget-pause-sql';
import { SqlChatEngines } from './chat-engine-sql';
import { SqlChats } from './chat-sql';
import { SqlChunks } from './chunk-sql';
import { SqlCommunities } from './community-sql';
import { SqlDocuments } from './document-sql';
import { SqlExtractionCache } from './extraction-cache-sql';
import { SqlGraphEdits } from './graph-edit-sql';
import { SqlGraphReads } from './graph-read-sql';
import { SqlGraphWrites } from './graph-write-sql';
import { SqlKnowledgeBases } from './knowledge-base-sql';
import { SqlLlmBudget } from './llm-budget-sql';
import { SqlLlmUsage } from './llm-usage-sql';
import { SqlOutbox } from './outbox-sql';
import type { SqlEngine } from './sql-engine';
import type { SqlDatabase } from './sql-session';
import { SqlGraphSummaries } from './summary-sql';

/**
 * Every repository written once over the SQL session port: both engines build these over their
 * database and engine (dialect, full text, vector ranking), and differ only in how they connect
 * and migrate.
 */
export function sqlRepositories(db: SqlDatabase, engine: SqlEngine): TrellisRepositories {
  return {
    knowledgeBases: new SqlKnowledgeBases(db, engine),
    documents: new SqlDocuments(db, engine),
    chunks: new SqlChunks(db, engine),
    extractionCache: new SqlExtractionCache(db, engine),
    graphWrites: new SqlGraphWrites(db, engine),
    graphSummaries: new SqlGraphSummaries(db, engine),
    graphReads: new SqlGraphReads(db, engine),
    graphEdits: new SqlGraphEdits(db, engine),
    llmUsage: new SqlLlmUsage(db, engine),
    llmBudget: new SqlLlmBudget(db, engine),
    budgetPauses: new SqlBudgetPauses(db, engine),
    chats: new SqlChats(db, engine),
    chatEngines: new SqlChatEngines(db, engine),
    communities: new SqlCommunities(db, engine.dialect),
    outbox: new SqlOutbox(db, engine),
  };
}
