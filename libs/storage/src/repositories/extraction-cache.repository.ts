import type { KbScope } from '@trellis/contracts';
import type { ExtractionResult } from '../records';

/** A cached extraction and the knowledge base whose row it is. */
export interface CachedExtraction {
  readonly result: ExtractionResult;
  readonly kbId: string;
}

/**
 * Extraction results by key (chunk content hash, model, prompt version), so the same text is
 * not sent to the model twice. Entries belong to the tenant and to the knowledge base that
 * wrote them: lookups never see another tenant's entries (a hit would tell one tenant that
 * another indexed the same text), and deleting a knowledge base deletes its entries.
 */
export interface ExtractionCacheRepository {
  /**
   * The entry under `key` in this tenant: this knowledge base's own when it has one,
   * otherwise one another knowledge base of the same tenant wrote (its `kbId` says which).
   */
  getCachedExtraction(scope: KbScope, key: string): Promise<CachedExtraction | null>;
  /** Writes (or replaces) this knowledge base's entry under `key`. */
  putCachedExtraction(scope: KbScope, key: string, result: ExtractionResult): Promise<void>;
}
