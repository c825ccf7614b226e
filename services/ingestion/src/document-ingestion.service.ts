import { basename } from 'node:path';
import { ErrorCode, TrellisError, contentHash, stableId } from '@trellis/contracts';
import type { KbScope, OutboxEvent, TenantScope } from '@trellis/contracts';
import { outboxEvent } from '@trellis/messaging';
import type { EventOutbox } from '@trellis/messaging';
import { assertVectorsCompatible } from '@trellis/models';
import type { EmbeddingProvider } from '@trellis/models';
import { kbScope, requireKnowledgeBase } from '@trellis/storage';
import type { DocumentRecord, NewDocumentVersion, TrellisRepositories } from '@trellis/storage';
import { DEFAULT_PARSE_LIMITS, parseDocument } from './parsing/document-parser';
import type { ParsedDocument } from './parsing/document-parser';
import { HTML_HEAD_CHARS, documentTitle } from './parsing/document-title';
import { validateDocumentMetadata, validateFilename, validateSourceUri } from './document-request-limits';
import { crawlSite } from './site/site-crawler';
import type { PageResult } from './site/site-crawler';
import { httpUrl, siteCrawlOf } from './site/site-request';
import type { SiteRequest } from './site/site-request';
import { UrlFetcher } from './url-fetch/url-fetcher';
import type { FetchedDocument } from './url-fetch/url-fetcher';
import type { IndexingBacklog } from './indexing-backlog';

/** Document metadata keys Trellis writes for pages it fetched. */
const ETAG_KEY = 'http.etag';
const LAST_MODIFIED_KEY = 'http.last_modified';
const SOURCE_KEY = 'trellis.source';

export interface IncomingDocument {
  readonly knowledgeBase: string;
  readonly filename: string;
  readonly mimeType: string;
  /** Stable identity of the source; defaults to the filename. */
  readonly sourceUri: string;
  readonly metadata: Record<string, string>;
  readonly bytes: Uint8Array;
}

export interface IngestResult {
  readonly document: DocumentRecord;
  /** True when the content matched the current, already indexed, version and nothing was done. */
  readonly unchanged: boolean;
}

export interface IngestionLimits {
  readonly maxUploadBytes: number;
  readonly urlFetchTimeoutMs: number;
  readonly urlFetchMaxRedirects: number;
  /** TRELLIS_URL_FETCH_ALLOW: internal destinations URL fetching may reach anyway. */
  readonly urlFetchAllow: readonly string[];
  readonly parseTimeoutMs: number;
  readonly maxDecompressedBytes: number;
}

/**
 * Accepts a document, parses it to text, stores it as a new version and announces it on
 * `document.ingested`. Identical content is recognised by hash and not indexed again; while
 * its indexing has not finished, it is announced again (same version), unless indexing events
 * are still queued: then its own is most likely among them, and the sweeper re-drives it once
 * the queue has drained if it was lost.
 */
export class DocumentIngestionService {
  private readonly fetcher: UrlFetcher;

  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'documents'>,
    private readonly outbox: Pick<EventOutbox, 'announce' | 'publishCommitted'>,
    private readonly limits: IngestionLimits,
    /** New text is refused for a knowledge base whose vectors another model made. */
    private readonly embedding: Pick<EmbeddingProvider, 'model' | 'dimensions'>,
    private readonly backlog: IndexingBacklog = async () => false,
  ) {
    this.fetcher = new UrlFetcher({ timeoutMs: limits.urlFetchTimeoutMs, maxRedirects: limits.urlFetchMaxRedirects, maxBytes: limits.maxUploadBytes, allow: limits.urlFetchAllow });
  }

  /** Raises RESOURCE_EXHAUSTED as soon as a stream passes the upload limit. */
  assertWithinLimit(sizeBytes: number, filename: string): void {
    if (sizeBytes > this.limits.maxUploadBytes) {
      throw new TrellisError(
        ErrorCode.ResourceExhausted,
        `"${filename}" is larger than the upload limit of ${formatBytes(this.limits.maxUploadBytes)} (TRELLIS_MAX_UPLOAD_BYTES)`,
      );
    }
  }

  /** A file's text as ingestion parses it, within this server's parse limits. */
  parse(bytes: Uint8Array, filename: string, mimeType: string): Promise<ParsedDocument> {
    return parseDocument(bytes, filename, mimeType, { ...DEFAULT_PARSE_LIMITS, timeoutMs: this.limits.parseTimeoutMs, maxDecompressedBytes: this.limits.maxDecompressedBytes });
  }

  async ingest(tenant: TenantScope, incoming: IncomingDocument): Promise<IngestResult> {
    const filename = validateFilename(incoming.filename);
    validateSourceUri(incoming.sourceUri);
    validateDocumentMetadata(incoming.metadata);
    this.assertWithinLimit(incoming.bytes.byteLength, filename);
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, incoming.knowledgeBase);
    assertVectorsCompatible(kb, this.embedding);
    const scope = kbScope(kb);
    const sourceUri = incoming.sourceUri.trim() || filename;
    const hash = contentHash(incoming.bytes);
    const existing = await this.repos.documents.findDocumentBySource(scope, sourceUri);
    if (existing !== null && existing.contentHash === hash && existing.status !== 'failed') {
      // Not in the graph yet: its event may have been lost (a crash between the write and the
      // publish), so the same version is announced again; every stage is idempotent. While
      // events are queued, it is most likely waiting its turn, and announcing it would index it
      // twice (a folder ingested again during a long backlog).
      if (existing.status === 'graphed') return { document: existing, unchanged: true };
      if (!(await this.backlog())) await this.announce(scope, existing);
      return { document: existing, unchanged: false };
    }
    const identity = {
      id: existing?.id ?? stableId('doc', scope.tenantId, scope.kbId, sourceUri),
      sourceUri,
      filename,
      contentHash: hash,
      version: (existing?.version ?? 0) + 1,
      sizeBytes: incoming.bytes.byteLength,
      metadata: incoming.metadata,
    };
    const startedAt = new Date().toISOString();
    const stage = (error: string | null) =>
      this.repos.documents.recordStage(scope, { documentId: identity.id, version: identity.version, stage: 'ingestion', startedAt, finishedAt: new Date().toISOString(), error });
    let parsed;
    try {
      parsed = await this.parse(incoming.bytes, filename, incoming.mimeType);
    } catch (error) {
      const message = error instanceof TrellisError ? error.message : `could not parse "${filename}": ${(error as Error).message}`;
      await this.repos.documents.saveFailedDocument(scope, { ...identity, title: documentTitle({ metadata: identity.metadata, text: '', filename }), mimeType: incoming.mimeType || 'application/octet-stream' }, message);
      await stage(message);
      throw error instanceof TrellisError ? error : TrellisError.invalid(message);
    }
    const metadata = { ...parsed.metadata, ...identity.metadata };
    const html = parsed.mimeType === 'text/html' ? new TextDecoder().decode(incoming.bytes.subarray(0, HTML_HEAD_CHARS)) : undefined;
    const title = documentTitle({ metadata, text: parsed.text, filename, ...(html === undefined ? {} : { html }) });
    const document = await this.saveVersion(scope, { ...identity, metadata, title, mimeType: parsed.mimeType, text: parsed.text }, () => stage(null));
    return { document, unchanged: false };
  }

  /** Downloads a URL and ingests it; the URL is the document's source identity. */
  async ingestUrl(tenant: TenantScope, knowledgeBase: string, url: string, metadata: Record<string, string>): Promise<IngestResult> {
    validateDocumentMetadata(metadata);
    const parsedUrl = httpUrl(url, 'url');
    await requireKnowledgeBase(this.repos.knowledgeBases, tenant, knowledgeBase);
    return this.ingestFetched(tenant, knowledgeBase, await this.fetcher.fetch(parsedUrl), parsedUrl, metadata);
  }

  /**
   * Adds the pages of a site (`crawlSite`): each page is fetched by the same URL fetcher and
   * ingested as `ingestUrl` would, under its URL; its ETag and Last-Modified are kept in the
   * document's metadata for the conditional fetch of the next run.
   */
  async *ingestSite(tenant: TenantScope, request: SiteRequest): AsyncGenerator<PageResult> {
    const crawl = siteCrawlOf(request);
    // Room is left for the keys every page gets.
    validateDocumentMetadata({ ...request.metadata, [ETAG_KEY]: '', [LAST_MODIFIED_KEY]: '', [SOURCE_KEY]: '' });
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, request.knowledgeBase);
    const scope = kbScope(kb);
    yield* crawlSite(crawl, {
      checkReachable: async (url) => void (await this.fetcher.checkedAddress(url)),
      fetch: (url, copy) => this.fetcher.fetchIfChanged(url, copy),
      cachedCopy: async (url) => {
        const held = await this.repos.documents.findDocumentBySource(scope, url.href);
        if (held === null || held.status === 'failed') return null;
        return { etag: held.metadata[ETAG_KEY], lastModified: held.metadata[LAST_MODIFIED_KEY] };
      },
      ingest: (page, requested) => this.ingestFetched(tenant, request.knowledgeBase, page, requested, { ...request.metadata, [SOURCE_KEY]: crawl.mode }),
    });
  }

  private ingestFetched(tenant: TenantScope, knowledgeBase: string, page: FetchedDocument, requested: URL, metadata: Record<string, string>): Promise<IngestResult> {
    // The name a URL gives is the end of its (percent-encoded) path, kept within the file name limit.
    const filename = (basename(requested.pathname) || requested.hostname).slice(-200);
    const withExtension = /\.[a-z0-9]+$/i.test(filename) ? filename : `${filename}.html`;
    const validators: Record<string, string> = {};
    if (page.etag) validators[ETAG_KEY] = page.etag;
    if (page.lastModified) validators[LAST_MODIFIED_KEY] = page.lastModified;
    return this.ingest(tenant, { knowledgeBase, filename: withExtension, mimeType: page.mimeType, sourceUri: requested.href, metadata: { ...metadata, ...validators }, bytes: page.bytes });
  }

  /**
   * After a restart, re-announces every document whose indexing had not finished. Events of
   * the in-process bus do not survive a restart, and a crash can fall between a write and its
   * event; the status columns say what is left to do, and every stage is idempotent.
   */
  async redriveUnfinished(): Promise<number> {
    const unfinished = await this.repos.documents.listUnfinishedDocuments();
    for (const entry of unfinished) {
      const document = await this.repos.documents.getDocument(entry, entry.documentId);
      if (document !== null) await this.announce(entry, document);
    }
    return unfinished.length;
  }

  /**
   * Stores a new version and announces it: the version and its `document.ingested` commit
   * together (the outbox), so a crash or a broker outage after the write delays the event, it
   * cannot lose it. `beforePublish` runs between the commit and the publish.
   */
  async saveVersion(scope: KbScope, version: NewDocumentVersion, beforePublish?: () => Promise<void>): Promise<DocumentRecord> {
    const announcement = documentIngested(scope, version);
    const document = await this.repos.documents.saveDocumentVersion(scope, version, [announcement]);
    await beforePublish?.();
    await this.outbox.publishCommitted([announcement]);
    return document;
  }

  /** Re-publishes `document.ingested` for a stored version (through the outbox); safe to repeat (handlers are idempotent). */
  async announce(scope: KbScope, document: Pick<DocumentRecord, 'id' | 'version' | 'contentHash'>): Promise<void> {
    await this.outbox.announce([documentIngested(scope, document)]);
  }
}

/** The `document.ingested` event of a stored version. */
function documentIngested(scope: KbScope, document: Pick<DocumentRecord, 'id' | 'version' | 'contentHash'>): OutboxEvent {
  return outboxEvent(
    'document.ingested',
    document.id,
    {
      context: { tenantId: scope.tenantId, knowledgeBaseId: scope.kbId, documentId: document.id, documentVersion: document.version, traceparent: '', knowledgeBase: undefined },
      contentHash: document.contentHash,
    },
    scope,
  );
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MB` : `${bytes} bytes`;
}
