import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { KbScope, TenantScope } from '@trellis/contracts';
import { assertVectorsCompatible } from '@trellis/models';
import type { EmbeddingProvider } from '@trellis/models';
import { kbScope, requireKnowledgeBase } from '@trellis/storage';
import type { DocumentRecord, KnowledgeBaseRecord, TrellisRepositories } from '@trellis/storage';
import type { DocumentIngestionService } from './document-ingestion.service';
import { documentTitle } from './parsing/document-title';

/**
 * Indexes stored documents again, e.g. after the knowledge base's model, prompt or resolution
 * settings changed. The current text becomes a new version, which the pipeline chunks,
 * extracts (unchanged chunk content hits the extraction cache for the same model and prompt)
 * and writes to the graph; once that version is in, the graph writer's purge of older versions
 * removes their chunks, provenance and the facts only they supported. Until then the previous
 * version keeps answering queries.
 */
export class DocumentReindexService {
  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'documents'>,
    private readonly ingestion: Pick<DocumentIngestionService, 'saveVersion'>,
    /** The server's model: re-indexing a whole knowledge base moves it to this model. */
    private readonly embedding: Pick<EmbeddingProvider, 'model' | 'dimensions'>,
  ) {}

  async reindexDocument(tenant: TenantScope, knowledgeBase: string, documentId: string): Promise<DocumentRecord> {
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, knowledgeBase);
    // One document alone cannot change models: the rest of the knowledge base would stay in the old space.
    assertVectorsCompatible(kb, this.embedding);
    const document = await this.repos.documents.getDocument(kbScope(kb), documentId);
    if (document === null) throw TrellisError.notFound(`document "${documentId}" not found in knowledge base "${kb.name}"`);
    const next = await this.newVersion(kbScope(kb), document);
    if (next === null) throw new TrellisError(ErrorCode.FailedPrecondition, `document "${documentId}" has no stored text to index (it could not be parsed)`);
    return next;
  }

  /** Every document with stored text, each as a new version; documents without text are skipped. */
  async reindexKnowledgeBase(tenant: TenantScope, knowledgeBase: string): Promise<DocumentRecord[]> {
    const kb = await this.adoptServerModel(await requireKnowledgeBase(this.repos.knowledgeBases, tenant, knowledgeBase));
    const reindexed: DocumentRecord[] = [];
    for (const document of await this.repos.documents.listDocuments(kbScope(kb))) {
      const next = await this.newVersion(kbScope(kb), document);
      if (next !== null) reindexed.push(next);
    }
    return reindexed;
  }

  /**
   * Records the server's embedding model in the knowledge base, so the new versions are
   * embedded and accepted with it. Queries keep using full text for the old vectors until
   * the new versions are in.
   */
  private async adoptServerModel(kb: KnowledgeBaseRecord): Promise<KnowledgeBaseRecord> {
    if (kb.settings.embeddingModel === this.embedding.model) return kb;
    const settings = { ...kb.settings, embeddingModel: this.embedding.model, embeddingDimensions: this.embedding.dimensions };
    return (await this.repos.knowledgeBases.updateKnowledgeBase(kbScope(kb), { description: kb.description, settings })) ?? kb;
  }

  private async newVersion(scope: KbScope, document: DocumentRecord): Promise<DocumentRecord | null> {
    const text = await this.repos.documents.getDocumentText(scope, document.id, document.version);
    if (text === null) return null;
    return this.ingestion.saveVersion(scope, {
      id: document.id,
      sourceUri: document.sourceUri,
      filename: document.filename,
      mimeType: document.mimeType,
      contentHash: document.contentHash,
      version: document.version + 1,
      sizeBytes: document.sizeBytes,
      metadata: document.metadata,
      // A document stored before titles were recorded gets one from what is kept of it (not an HTML <title>).
      title: document.title || documentTitle({ metadata: document.metadata, text, filename: document.filename }),
      text,
    });
  }
}
