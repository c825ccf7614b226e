import type { DocumentStatusCount } from '@trellis/observability';
import type { TrellisRepositories } from '@trellis/storage';

/**
 * The rows of `trellis_documents_indexing`: unfinished documents grouped by knowledge base
 * and status, with knowledge-base names looked up once per scrape (ids as a fallback).
 */
export function documentBacklog(repositories: Pick<TrellisRepositories, 'documents' | 'knowledgeBases'>): () => Promise<DocumentStatusCount[]> {
  const { documents, knowledgeBases } = repositories;
  return async () => {
    const counts = new Map<string, { tenantId: string; kbId: string; status: string; count: number }>();
    for (const d of await documents.listUnfinishedDocuments()) {
      const key = `${d.tenantId}\u0000${d.kbId}\u0000${d.status}`;
      const row = counts.get(key) ?? { tenantId: d.tenantId, kbId: d.kbId, status: String(d.status), count: 0 };
      row.count++;
      counts.set(key, row);
    }
    const names = new Map<string, string>();
    for (const row of counts.values()) {
      const key = `${row.tenantId}\u0000${row.kbId}`;
      if (names.has(key)) continue;
      const kb = await knowledgeBases.findKnowledgeBase({ tenantId: row.tenantId }, row.kbId).catch(() => null);
      names.set(key, kb?.name ?? row.kbId);
    }
    return [...counts.values()].map((r) => ({
      tenant: r.tenantId,
      knowledgeBase: names.get(`${r.tenantId}\u0000${r.kbId}`) ?? r.kbId,
      status: r.status,
      count: r.count,
    }));
  };
}
