import { Controller, Inject } from '@nestjs/common';
import type { Metadata } from '@grpc/grpc-js';
import { Observable, from, map, mergeMap, reduce } from 'rxjs';
import { TrellisError, chunkingAndModelFromMessages, v1 } from '@trellis/contracts';
import { TENANT_RESOLVER, TenantResolver } from '@trellis/grpc-edge';
import { DocumentIngestionService } from '../document-ingestion.service';
import { validateFilename } from '../document-request-limits';
import { DocumentReindexService } from '../document-reindex.service';
import { IngestEstimator } from '../estimate/ingest-estimator';
import { KnowledgeBaseService } from '../knowledge-base.service';
import type { KnowledgeBaseRecord } from '@trellis/storage';
import { fromBudgetMessage, fromExtractionMessage, fromResolutionMessage, fromStatusMessage, toBudgetStatusMessage, toDocumentMessage, toDocumentProgressMessage, toEstimateMessage, toKnowledgeBaseMessage, toSitePageMessage } from './messages';

interface UploadState {
  metadata?: v1.UploadMetadata;
  parts: Uint8Array[];
  size: number;
}

/** gRPC edge of knowledge bases and documents: decode, resolve the tenant, delegate. */
@Controller()
@v1.KnowledgeBaseServiceControllerMethods()
export class KnowledgeBaseController implements v1.KnowledgeBaseServiceController {
  constructor(
    @Inject(KnowledgeBaseService) private readonly knowledgeBases: KnowledgeBaseService,
    @Inject(DocumentIngestionService) private readonly ingestion: DocumentIngestionService,
    @Inject(TENANT_RESOLVER) private readonly tenants: TenantResolver,
    @Inject(DocumentReindexService) private readonly reindexer: DocumentReindexService,
    @Inject(IngestEstimator) private readonly estimator: IngestEstimator,
  ) {}

  async createKnowledgeBase(request: v1.CreateKnowledgeBaseRequest, metadata?: Metadata): Promise<v1.KnowledgeBase> {
    const kb = await this.knowledgeBases.create(this.tenants.resolve(metadata), {
      name: request.name,
      description: request.description,
      settings: {
        ...chunkingAndModelFromMessages(request),
        extraction: fromExtractionMessage(request.extraction),
        resolution: fromResolutionMessage(request.resolution),
        llmBudget: fromBudgetMessage(request.llmBudget),
      },
    });
    return toKnowledgeBaseMessage(kb, 0, this.serverEmbedding(), undefined, await this.budgetStatus(kb));
  }

  async updateKnowledgeBase(request: v1.UpdateKnowledgeBaseRequest, metadata?: Metadata): Promise<v1.KnowledgeBase> {
    const kb = await this.knowledgeBases.update(this.tenants.resolve(metadata), request.knowledgeBase, {
      description: request.description,
      llmModel: request.llmModel,
      extraction: fromExtractionMessage(request.extraction),
      resolution: fromResolutionMessage(request.resolution),
      llmBudget: fromBudgetMessage(request.llmBudget),
    });
    return this.knowledgeBaseMessage(kb);
  }

  async listKnowledgeBases(_request: v1.ListKnowledgeBasesRequest, metadata?: Metadata): Promise<v1.ListKnowledgeBasesResponse> {
    const kbs = await this.knowledgeBases.list(this.tenants.resolve(metadata));
    return {
      knowledgeBases: await Promise.all(kbs.map(async (kb) => toKnowledgeBaseMessage(kb, await this.knowledgeBases.documentCount(kb), this.serverEmbedding(), undefined, await this.budgetStatus(kb)))),
    };
  }

  async getKnowledgeBase(request: v1.GetKnowledgeBaseRequest, metadata?: Metadata): Promise<v1.KnowledgeBase> {
    return this.knowledgeBaseMessage(await this.knowledgeBases.get(this.tenants.resolve(metadata), request.knowledgeBase));
  }

  private async knowledgeBaseMessage(kb: KnowledgeBaseRecord): Promise<v1.KnowledgeBase> {
    const [count, usage, budget] = await Promise.all([this.knowledgeBases.documentCount(kb), this.knowledgeBases.llmUsage(kb), this.budgetStatus(kb)]);
    return toKnowledgeBaseMessage(kb, count, this.serverEmbedding(), usage, budget);
  }

  private async budgetStatus(kb: KnowledgeBaseRecord): Promise<v1.LlmBudgetStatus> {
    const { state, pausedChunks } = await this.knowledgeBases.budget(kb);
    return toBudgetStatusMessage(state, pausedChunks);
  }

  async deleteKnowledgeBase(request: v1.DeleteKnowledgeBaseRequest, metadata?: Metadata): Promise<v1.DeleteKnowledgeBaseResponse> {
    await this.knowledgeBases.delete(this.tenants.resolve(metadata), request.knowledgeBase);
    return { deleted: true };
  }

  /**
   * Returns an Observable synchronously, as Nest requires for client-streaming methods (it
   * starts delivering the stream only once the handler has returned).
   */
  uploadDocument(request: Observable<v1.UploadDocumentRequest>, metadata?: Metadata): Observable<v1.Document> {
    return request.pipe(
      reduce<v1.UploadDocumentRequest, UploadState>((state, message) => this.accumulate(state, message), { parts: [], size: 0 }),
      mergeMap((upload) => from(this.completeUpload(upload, metadata))),
    );
  }

  private accumulate(state: UploadState, message: v1.UploadDocumentRequest): UploadState {
    if (message.metadata) {
      if (state.metadata) throw TrellisError.invalid('upload metadata must be sent once, in the first message');
      // Refused as soon as it arrives, not after the whole file has streamed in.
      validateFilename(message.metadata.filename);
      state.metadata = message.metadata;
    } else if (message.data) {
      if (!state.metadata) throw TrellisError.invalid('the first upload message must carry metadata');
      state.size += message.data.byteLength;
      this.ingestion.assertWithinLimit(state.size, state.metadata.filename);
      state.parts.push(message.data);
    }
    return state;
  }

  private async completeUpload(upload: UploadState, metadata?: Metadata): Promise<v1.Document> {
    const tenant = this.tenants.resolve(metadata);
    const meta = upload.metadata;
    if (!meta) throw TrellisError.invalid('the upload carried no metadata');
    const result = await this.ingestion.ingest(tenant, {
      knowledgeBase: meta.knowledgeBase,
      filename: meta.filename,
      mimeType: meta.mimeType,
      sourceUri: meta.sourceUri,
      metadata: meta.metadata,
      bytes: Buffer.concat(upload.parts),
    });
    return toDocumentMessage(result.document, {}, result.unchanged);
  }

  async addDocumentFromUrl(request: v1.AddDocumentFromUrlRequest, metadata?: Metadata): Promise<v1.Document> {
    const result = await this.ingestion.ingestUrl(this.tenants.resolve(metadata), request.knowledgeBase, request.url, request.metadata);
    return toDocumentMessage(result.document, {}, result.unchanged);
  }

  addSite(request: v1.AddSiteRequest, metadata?: Metadata): Observable<v1.SitePage> {
    // The gRPC loader gives undefined for an unset optional field.
    const pages = this.ingestion.ingestSite(this.tenants.resolve(metadata), { ...request, delayMs: request.delayMs ?? undefined });
    return from(pages).pipe(map(toSitePageMessage));
  }

  async listDocuments(request: v1.ListDocumentsRequest, metadata?: Metadata): Promise<v1.ListDocumentsResponse> {
    const { documents, nextPageToken } = await this.knowledgeBases.listDocuments(this.tenants.resolve(metadata), request.knowledgeBase, {
      pageSize: request.pageSize,
      pageToken: request.pageToken,
      status: fromStatusMessage(request.status),
    });
    return { documents: documents.map((d) => toDocumentMessage(d.document, d.chunkCounts, false, d.stages, d.llmUsage, d.statusDetail)), nextPageToken };
  }

  async getDocument(request: v1.GetDocumentRequest, metadata?: Metadata): Promise<v1.Document> {
    const d = await this.knowledgeBases.getDocument(this.tenants.resolve(metadata), request.knowledgeBase, request.documentId);
    return toDocumentMessage(d.document, d.chunkCounts, false, d.stages, d.llmUsage, d.statusDetail);
  }

  async getIndexingProgress(request: v1.GetIndexingProgressRequest, metadata?: Metadata): Promise<v1.IndexingProgress> {
    const progress = await this.knowledgeBases.indexingProgress(this.tenants.resolve(metadata), request.knowledgeBase, request.documentIds);
    return { documents: progress.map((p) => toDocumentProgressMessage(p.document, p.chunkCounts, p.statusDetail)) };
  }

  async deleteDocument(request: v1.DeleteDocumentRequest, metadata?: Metadata): Promise<v1.DeleteDocumentResponse> {
    await this.knowledgeBases.deleteDocument(this.tenants.resolve(metadata), request.knowledgeBase, request.documentId);
    return { deleted: true };
  }

  async reindexDocument(request: v1.ReindexDocumentRequest, metadata?: Metadata): Promise<v1.Document> {
    const document = await this.reindexer.reindexDocument(this.tenants.resolve(metadata), request.knowledgeBase, request.documentId);
    return toDocumentMessage(document, {});
  }

  async reindexKnowledgeBase(request: v1.ReindexKnowledgeBaseRequest, metadata?: Metadata): Promise<v1.ReindexKnowledgeBaseResponse> {
    const documents = await this.reindexer.reindexKnowledgeBase(this.tenants.resolve(metadata), request.knowledgeBase);
    return { documents: documents.map((d) => toDocumentMessage(d, {})) };
  }

  async estimateIngest(request: v1.EstimateIngestRequest, metadata?: Metadata): Promise<v1.IngestEstimate> {
    const files = request.files.map((f) => ({ filename: f.filename, mimeType: f.mimeType, sourceUri: f.sourceUri, bytes: f.data }));
    return toEstimateMessage(await this.estimator.estimate(this.tenants.resolve(metadata), request.knowledgeBase, files));
  }

  private serverEmbedding(): v1.ServerEmbedding {
    const { model, dimensions, fallback } = this.knowledgeBases.serverEmbedding();
    return { model, dimensions, fallback: fallback ?? '' };
  }
}
