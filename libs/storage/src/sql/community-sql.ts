import type { KbScope } from '@trellis/contracts';
import type { CommunityChangeLog, CommunityChanges, CommunityRecord, KeyFact, ReportKind } from '@trellis/graph';
import type { CommunityRepository, CommunityState } from '../repositories/community.repository';
import { batches, fromSqlTime, readJson } from '../row-mappers';
import type { Row } from '../row-mappers';
import { bufferToVector, vectorToBuffer } from '@trellis/vectors';
import { takeInserted } from './sql-dialect';
import type { SqlDialect } from './sql-dialect';
import { execWhereIn, groupByOwner, rowsWhereIn } from './sql-session';
import type { SqlDatabase, SqlSession } from './sql-session';

const COLUMNS = 'id, level, parent_id, title, summary, key_facts, report_kind, content_hash, member_count, embedding, updated_at';
const UPDATED = ['level', 'parent_id', 'title', 'summary', 'key_facts', 'report_kind', 'content_hash', 'member_count', 'embedding', 'updated_at'];

/** Communities, their members and each knowledge base's refresh state, over either engine. */
export class SqlCommunities implements CommunityRepository {
  constructor(
    private readonly db: SqlDatabase,
    private readonly dialect: SqlDialect,
  ) {}

  async listCommunities(scope: KbScope): Promise<CommunityRecord[]> {
    const params = [scope.tenantId, scope.kbId];
    const rows = await this.db.rows(`SELECT ${COLUMNS} FROM communities WHERE tenant_id = ? AND kb_id = ? ORDER BY level, id`, params);
    const members = groupByOwner(
      await this.db.rows('SELECT community_id AS owner, entity_id FROM community_members WHERE tenant_id = ? AND kb_id = ? ORDER BY community_id, entity_id', params),
    );
    return rows.map((row) => toCommunity(row, (members.get(String(row.id)) ?? []).map((m) => String(m.entity_id))));
  }

  /** The communities (every level) holding any of these entities, whole, by level then id. */
  async listCommunitiesOfEntities(scope: KbScope, entityIds: readonly string[]): Promise<CommunityRecord[]> {
    const params = [scope.tenantId, scope.kbId];
    // No DISTINCT (the ids are deduplicated here): with it SQLite reads the primary key, in
    // community order, across the whole knowledge base instead of the entities' index ranges.
    const owners = await rowsWhereIn(this.db, (m) => `SELECT community_id FROM community_members WHERE tenant_id = ? AND kb_id = ? AND entity_id IN (${m})`, params, [
      ...new Set(entityIds),
    ]);
    const ids = [...new Set(owners.map((r) => String(r.community_id)))].sort();
    const rows = await rowsWhereIn(this.db, (m) => `SELECT ${COLUMNS} FROM communities WHERE ${this.dialect.byIdScope()} AND id IN (${m})`, params, ids);
    const members = groupByOwner(
      await rowsWhereIn(this.db, (m) => `SELECT community_id AS owner, entity_id FROM community_members WHERE tenant_id = ? AND kb_id = ? AND community_id IN (${m}) ORDER BY community_id, entity_id`, params, ids),
    );
    const out = rows.map((row) => toCommunity(row, (members.get(String(row.id)) ?? []).map((m) => String(m.entity_id))));
    return out.sort((a, b) => a.level - b.level || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Those of these entities that are members of some community. */
  async listAssignedEntities(scope: KbScope, entityIds: readonly string[]): Promise<string[]> {
    const sql = (m: string) => `SELECT DISTINCT entity_id FROM community_members WHERE tenant_id = ? AND kb_id = ? AND entity_id IN (${m})`;
    return [...new Set((await rowsWhereIn(this.db, sql, [scope.tenantId, scope.kbId], [...new Set(entityIds)])).map((r) => String(r.entity_id)))].sort();
  }

  /** Entities of the knowledge base that are members of no community. */
  async countUnassignedEntities(scope: KbScope): Promise<number> {
    const [row] = await this.db.rows(
      `SELECT COUNT(*) AS n FROM entities e WHERE e.tenant_id = ? AND e.kb_id = ?
       AND NOT EXISTS (SELECT 1 FROM community_members m WHERE m.tenant_id = e.tenant_id AND m.kb_id = e.kb_id AND m.entity_id = e.id)`,
      [scope.tenantId, scope.kbId],
    );
    return Number(row?.n ?? 0);
  }

  async countCommunities(scope: KbScope): Promise<{ communities: number; levels: number }> {
    const [row] = await this.db.rows('SELECT COUNT(*) AS n, COUNT(DISTINCT level) AS levels FROM communities WHERE tenant_id = ? AND kb_id = ?', [scope.tenantId, scope.kbId]);
    return { communities: Number(row?.n ?? 0), levels: Number(row?.levels ?? 0) };
  }

  async listCommunityChanges(scope: KbScope): Promise<CommunityChangeLog> {
    const params = [scope.tenantId, scope.kbId];
    const [state] = await this.db.rows('SELECT refreshed_at, changes_tracked FROM community_state WHERE tenant_id = ? AND kb_id = ?', params);
    const rows = await this.db.rows('SELECT entity_id, version FROM community_changes WHERE tenant_id = ? AND kb_id = ? ORDER BY entity_id', params);
    const tracked = state !== undefined && state.refreshed_at !== null && state.refreshed_at !== undefined && Number(state.changes_tracked) === 1;
    return { tracked, marks: rows.map((r) => ({ entityId: String(r.entity_id), version: Number(r.version) })) };
  }

  async getCommunity(scope: KbScope, communityId: string): Promise<CommunityRecord | null> {
    const [row] = await this.db.rows(`SELECT ${COLUMNS} FROM communities WHERE ${this.dialect.byIdScope()} AND id = ?`, [scope.tenantId, scope.kbId, communityId]);
    if (row === undefined) return null;
    const members = await this.db.rows('SELECT entity_id FROM community_members WHERE tenant_id = ? AND kb_id = ? AND community_id = ? ORDER BY entity_id', [
      scope.tenantId,
      scope.kbId,
      communityId,
    ]);
    return toCommunity(row, members.map((m) => String(m.entity_id)));
  }

  async saveCommunities(scope: KbScope, changes: CommunityChanges, refreshedAt: string): Promise<void> {
    const d = this.dialect;
    const at = d.time(refreshedAt);
    await this.db.transaction(async (tx) => {
      const params = [scope.tenantId, scope.kbId];
      const where = (marks: string) => `tenant_id = ? AND kb_id = ? AND community_id IN (${marks})`;
      await execWhereIn(tx, (m) => `DELETE FROM community_members WHERE ${where(m)}`, params, changes.removedIds);
      await execWhereIn(tx, (m) => `DELETE FROM communities WHERE ${d.byIdScope()} AND id IN (${m})`, params, changes.removedIds);
      // Members are written as a difference: an ancestor on the path of a change keeps its id
      // and all but a few of its (possibly hundreds of) members.
      const stored = groupByOwner(
        await rowsWhereIn(tx, (m) => `SELECT community_id AS owner, entity_id FROM community_members WHERE ${where(m)}`, params, changes.upserts.map((c) => c.id)),
      );
      for (const c of changes.upserts) {
        await tx.exec(
          `INSERT INTO communities (tenant_id, kb_id, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ${d.onConflictUpdate(takeInserted(d, UPDATED))}`,
          [
            scope.tenantId,
            scope.kbId,
            c.id,
            c.level,
            c.parentId,
            c.title,
            c.summary,
            JSON.stringify(c.keyFacts),
            c.kind,
            c.contentHash,
            c.memberIds.length,
            c.embedding.length === 0 ? null : vectorToBuffer(c.embedding),
            at,
          ],
        );
        const before = new Set((stored.get(c.id) ?? []).map((m) => String(m.entity_id)));
        const after = new Set(c.memberIds);
        const gone = [...before].filter((id) => !after.has(id));
        await execWhereIn(tx, (m) => `DELETE FROM community_members WHERE tenant_id = ? AND kb_id = ? AND community_id = ? AND entity_id IN (${m})`, [...params, c.id], gone);
        await insertMembers(tx, scope, c.id, c.memberIds.filter((id) => !before.has(id)));
      }
      // Only the marks read: a change recorded since (a new mark, or a version counted up) stays.
      // Grouped by version (few distinct values), so a full build's thousands of marks take few statements.
      const byVersion = new Map<number, string[]>();
      for (const c of changes.consumedChanges ?? []) {
        const ids = byVersion.get(c.version);
        if (ids) ids.push(c.entityId);
        else byVersion.set(c.version, [c.entityId]);
      }
      for (const [version, ids] of byVersion) {
        await execWhereIn(tx, (m) => `DELETE FROM community_changes WHERE tenant_id = ? AND kb_id = ? AND version = ? AND entity_id IN (${m})`, [scope.tenantId, scope.kbId, version], ids);
      }
      await tx.exec(
        `INSERT INTO community_state (tenant_id, kb_id, changed_at, refreshed_at, changes_tracked) VALUES (?, ?, NULL, ?, 1) ${d.onConflictUpdate(takeInserted(d, ['refreshed_at', 'changes_tracked']))}`,
        [scope.tenantId, scope.kbId, at],
      );
    });
  }

  async markCommunitiesChanged(scope: KbScope, at: string): Promise<void> {
    const d = this.dialect;
    await this.db.exec(
      `INSERT INTO community_state (tenant_id, kb_id, changed_at, refreshed_at) VALUES (?, ?, ?, NULL) ${d.onConflictUpdate(takeInserted(d, ['changed_at']))}`,
      [scope.tenantId, scope.kbId, d.time(at)],
    );
  }

  async listCommunityRefreshesDue(quietSince: string): Promise<KbScope[]> {
    const rows = await this.db.rows(
      `SELECT tenant_id, kb_id FROM community_state WHERE changed_at IS NOT NULL AND changed_at <= ?
       AND refreshed_at IS NOT NULL AND refreshed_at < changed_at ORDER BY tenant_id, kb_id`,
      [this.dialect.time(quietSince)],
    );
    return rows.map((r) => ({ tenantId: String(r.tenant_id), kbId: String(r.kb_id) }));
  }

  async getCommunityState(scope: KbScope): Promise<CommunityState> {
    const [row] = await this.db.rows('SELECT changed_at, refreshed_at FROM community_state WHERE tenant_id = ? AND kb_id = ?', [scope.tenantId, scope.kbId]);
    const time = (value: unknown) => (value === null || value === undefined ? null : fromSqlTime(value));
    return { changedAt: time(row?.changed_at), refreshedAt: time(row?.refreshed_at) };
  }
}

async function insertMembers(tx: SqlSession, scope: KbScope, communityId: string, memberIds: readonly string[]): Promise<void> {
  for (const batch of batches(memberIds, 200)) {
    const values = batch.map(() => '(?, ?, ?, ?)').join(', ');
    await tx.exec(`INSERT INTO community_members (tenant_id, kb_id, community_id, entity_id) VALUES ${values}`, batch.flatMap((id) => [scope.tenantId, scope.kbId, communityId, id]));
  }
}

function toCommunity(row: Row, memberIds: string[]): CommunityRecord {
  return {
    id: String(row.id),
    level: Number(row.level),
    parentId: row.parent_id === null || row.parent_id === undefined ? null : String(row.parent_id),
    title: String(row.title),
    summary: String(row.summary),
    keyFacts: readJson<KeyFact[]>(row.key_facts),
    kind: String(row.report_kind) as ReportKind,
    contentHash: String(row.content_hash),
    memberIds,
    embedding: Buffer.isBuffer(row.embedding) ? bufferToVector(row.embedding) : new Float32Array(0),
    updatedAt: fromSqlTime(row.updated_at),
  };
}
