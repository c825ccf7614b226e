import type { KbScope } from '@trellis/contracts';
import type { ExtractionResult } from '../records';
import type { CachedExtraction, ExtractionCacheRepository } from '../repositories/extraction-cache.repository';
import { readJson } from '../row-mappers';
import { takeInserted } from './sql-dialect';
import { SqlRepository } from './sql-engine';

/**
 * Extraction results by cache key, per tenant: a row belongs to the knowledge base that wrote it
 * (and is deleted with it), and a lookup prefers the asking knowledge base's own row.
 */
export class SqlExtractionCache extends SqlRepository implements ExtractionCacheRepository {
  async getCachedExtraction(scope: KbScope, key: string): Promise<CachedExtraction | null> {
    const [row] = await this.db.rows('SELECT kb_id, result FROM extraction_cache WHERE tenant_id = ? AND cache_key = ? ORDER BY kb_id = ? DESC LIMIT 1', [
      scope.tenantId,
      key,
      scope.kbId,
    ]);
    return row ? { kbId: String(row.kb_id), result: readJson<ExtractionResult>(row.result) } : null;
  }

  async putCachedExtraction(scope: KbScope, key: string, result: ExtractionResult): Promise<void> {
    const d = this.dialect;
    await this.db.exec(
      `INSERT INTO extraction_cache (tenant_id, kb_id, cache_key, result, created_at) VALUES (?, ?, ?, ?, ?) ${d.onConflictUpdate(takeInserted(d, ['result']))}`,
      [scope.tenantId, scope.kbId, key, JSON.stringify(result), d.time(new Date().toISOString())],
    );
  }
}
