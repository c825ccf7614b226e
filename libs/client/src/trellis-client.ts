import { join } from 'node:path';
import { credentials, loadPackageDefinition, Metadata, status } from '@grpc/grpc-js';
import type { Client, ClientDuplexStream, ClientReadableStream, ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { v1 } from '@trellis/contracts';
import { ACTOR_HEADER, GRPC_LOADER_OPTIONS, MAX_GRPC_MESSAGE_BYTES, RETRY_AFTER_HEADER, grpcClientTracing, protoDirectory } from '@trellis/wire';

/** The statuses of a document still indexing, as names: the wire carries enums by name (GRPC_LOADER_OPTIONS). */
const UNFINISHED_STATUSES = ['INDEX_STATUS_PENDING', 'INDEX_STATUS_CHUNKED', 'INDEX_STATUS_EMBEDDED', 'INDEX_STATUS_EXTRACTED'] as unknown as readonly v1.IndexStatus[];

type Unary<Req, Res> = (request: Req, metadata: Metadata, options: { deadline: Date }, callback: (error: ServiceError | null, response: Res) => void) => void;

interface RawClients {
  knowledgeBases: Client & Record<string, Unary<unknown, unknown>>;
  graph: Client & Record<string, Unary<unknown, unknown>>;
  retrieval: Client & Record<string, Unary<unknown, unknown>>;
  chat: Client & Record<string, unknown>;
}

const UPLOAD_PIECE_BYTES = 1024 * 1024;

export type ApiName = 'knowledgeBases' | 'graph' | 'retrieval' | 'chat';

export interface ClientOptions {
  /** host:port of a Trellis server (standalone, or a gateway routing by gRPC service). */
  readonly address: string;
  /** Per-API addresses, for distributed services reached directly (each falls back to `address`). */
  readonly addresses?: Partial<Record<ApiName, string>>;
  /** Sent as `authorization: Bearer <key>` when set. */
  readonly apiKey?: string;
  /** Deadline of unary calls. */
  readonly timeoutMs?: number;
  /** Sent as `x-trellis-actor`: who the graph edit log records as making an edit. */
  readonly actor?: string;
  /**
   * Unary calls and uploads the server shed (RESOURCE_EXHAUSTED with `retry-after-ms`) are sent
   * again after that wait, within the call's deadline. Default true; load tests turn it off to
   * see every refusal.
   */
  readonly retryShed?: boolean;
}

/**
 * A typed client of the Trellis gRPC API, used by the CLI, the benchmarks and the end-to-end
 * tests. Errors are the gRPC ServiceErrors the server returned (code + details).
 */
export class TrellisClient {
  private readonly raw: RawClients;
  private readonly timeoutMs: number;

  constructor(
    private readonly options: ClientOptions,
    /** The channels of another client (see `asCaller`); new channels when omitted. */
    shared?: TrellisClient,
  ) {
    this.timeoutMs = options.timeoutMs ?? 60_000;
    if (shared !== undefined) {
      this.raw = shared.raw;
      return;
    }
    const protoDir = protoDirectory();
    const definition = loadSync(
      ['knowledge_base', 'graph', 'retrieval', 'chat'].map((s) => join(protoDir, 'trellis/v1', `${s}.proto`)),
      { ...GRPC_LOADER_OPTIONS, includeDirs: [protoDir] },
    );
    const pkg = (loadPackageDefinition(definition) as unknown as { trellis: { v1: Record<string, new (...args: unknown[]) => Client> } }).trellis.v1;
    const channelOptions = {
      'grpc.max_receive_message_length': MAX_GRPC_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_GRPC_MESSAGE_BYTES,
      // A client span per call and its traceparent in the metadata, when this process traces.
      interceptors: [grpcClientTracing],
    };
    const make = (api: ApiName, service: string) =>
      new pkg[service]!(options.addresses?.[api] ?? options.address, credentials.createInsecure(), channelOptions) as never;
    this.raw = {
      knowledgeBases: make('knowledgeBases', 'KnowledgeBaseService'),
      graph: make('graph', 'GraphService'),
      retrieval: make('retrieval', 'RetrievalService'),
      chat: make('chat', 'ChatService'),
    };
  }

  /**
   * The same channels, calls sent as another caller: a gateway (the HTTP API) forwards each
   * request's key this way without a connection per key. Closing the view closes the channels.
   */
  asCaller(caller: Pick<ClientOptions, 'apiKey' | 'actor' | 'retryShed'>): TrellisClient {
    return new TrellisClient({ ...this.options, apiKey: caller.apiKey, actor: caller.actor ?? this.options.actor, retryShed: caller.retryShed ?? this.options.retryShed }, this);
  }

  /**
   * Any unary method by its gRPC name (`GetDocument`), for callers driven by the service
   * descriptors rather than by the typed methods; same deadline, metadata and shed handling.
   */
  invoke(api: ApiName, method: string, request: unknown): Promise<unknown> {
    const name = method.charAt(0).toLowerCase() + method.slice(1);
    if (typeof this.raw[api][name] !== 'function') return Promise.reject(new Error(`no unary method ${method} on ${api}`));
    return this.unary(this.raw[api] as Client & Record<string, unknown>, name, request);
  }

  createKnowledgeBase(request: Partial<v1.CreateKnowledgeBaseRequest>): Promise<v1.KnowledgeBase> {
    return this.unary(this.raw.knowledgeBases, 'createKnowledgeBase', request);
  }
  listKnowledgeBases(): Promise<v1.ListKnowledgeBasesResponse> {
    return this.unary(this.raw.knowledgeBases, 'listKnowledgeBases', {});
  }
  getKnowledgeBase(knowledgeBase: string): Promise<v1.KnowledgeBase> {
    return this.unary(this.raw.knowledgeBases, 'getKnowledgeBase', { knowledgeBase });
  }
  /** Unset fields keep their value; `extraction`, when given, replaces the extraction settings. */
  updateKnowledgeBase(request: Partial<v1.UpdateKnowledgeBaseRequest> & { knowledgeBase: string }): Promise<v1.KnowledgeBase> {
    return this.unary(this.raw.knowledgeBases, 'updateKnowledgeBase', request);
  }
  deleteKnowledgeBase(knowledgeBase: string): Promise<v1.DeleteKnowledgeBaseResponse> {
    return this.unary(this.raw.knowledgeBases, 'deleteKnowledgeBase', { knowledgeBase });
  }
  addDocumentFromUrl(request: Partial<v1.AddDocumentFromUrlRequest>): Promise<v1.Document> {
    return this.unary(this.raw.knowledgeBases, 'addDocumentFromUrl', request);
  }
  /**
   * The pages of a site as they are handled (see AddSiteRequest). A crawl runs as long as its
   * pages take, so its deadline is its own (`timeoutMs`, default one hour); stopping early
   * cancels the call, and the server stops crawling.
   */
  async *addSite(request: Partial<v1.AddSiteRequest> & { knowledgeBase: string }, timeoutMs = 3_600_000): AsyncGenerator<v1.SitePage> {
    const method = this.raw.knowledgeBases['addSite'] as (req: unknown, md: Metadata, options: { deadline: Date }) => ClientReadableStream<v1.SitePage>;
    const call = method.call(this.raw.knowledgeBases, request, this.metadata(), { deadline: new Date(Date.now() + timeoutMs) });
    try {
      for await (const page of call) yield page as v1.SitePage;
    } finally {
      call.cancel();
    }
  }
  /** One page of documents (see ListDocumentsRequest); `listAllDocuments` follows the pages. */
  listDocuments(knowledgeBase: string, page: Partial<Omit<v1.ListDocumentsRequest, 'knowledgeBase'>> = {}): Promise<v1.ListDocumentsResponse> {
    return this.unary(this.raw.knowledgeBases, 'listDocuments', { knowledgeBase, ...page });
  }
  /** Every document of the knowledge base (or every one in `status`), a page of 1,000 at a time. */
  async listAllDocuments(knowledgeBase: string, status?: v1.IndexStatus): Promise<v1.Document[]> {
    const documents: v1.Document[] = [];
    let pageToken = '';
    do {
      const page = await this.listDocuments(knowledgeBase, { pageSize: 1000, pageToken, ...(status === undefined ? {} : { status }) });
      documents.push(...page.documents);
      pageToken = page.nextPageToken;
    } while (pageToken !== '');
    return documents;
  }
  /**
   * Whether any document of the knowledge base is still indexing (not yet graphed or failed):
   * one single-document page per unfinished status, so asking costs the same at any size.
   */
  async isIndexing(knowledgeBase: string): Promise<boolean> {
    for (const status of UNFINISHED_STATUSES) {
      if ((await this.listDocuments(knowledgeBase, { status, pageSize: 1 })).documents.length > 0) return true;
    }
    return false;
  }
  /** Status, error and chunk counts of these documents (at most 1,000 ids); see GetIndexingProgress. */
  getIndexingProgress(knowledgeBase: string, documentIds: readonly string[]): Promise<v1.IndexingProgress> {
    return this.unary(this.raw.knowledgeBases, 'getIndexingProgress', { knowledgeBase, documentIds: [...documentIds] });
  }
  getDocument(knowledgeBase: string, documentId: string): Promise<v1.Document> {
    return this.unary(this.raw.knowledgeBases, 'getDocument', { knowledgeBase, documentId });
  }
  deleteDocument(knowledgeBase: string, documentId: string): Promise<v1.DeleteDocumentResponse> {
    return this.unary(this.raw.knowledgeBases, 'deleteDocument', { knowledgeBase, documentId });
  }
  reindexDocument(knowledgeBase: string, documentId: string): Promise<v1.Document> {
    return this.unary(this.raw.knowledgeBases, 'reindexDocument', { knowledgeBase, documentId });
  }
  reindexKnowledgeBase(knowledgeBase: string): Promise<v1.ReindexKnowledgeBaseResponse> {
    return this.unary(this.raw.knowledgeBases, 'reindexKnowledgeBase', { knowledgeBase });
  }
  /** What ingesting the files would cost; nothing is stored or sent to a model. One request: keep it under the gRPC message limit. */
  estimateIngest(knowledgeBase: string, files: ReadonlyArray<Partial<v1.EstimateFile>>): Promise<v1.IngestEstimate> {
    return this.unary(this.raw.knowledgeBases, 'estimateIngest', { knowledgeBase, files });
  }

  /** Streams the bytes in 1 MB pieces after a first metadata message. */
  uploadDocument(metadata: Partial<v1.UploadMetadata>, bytes: Uint8Array): Promise<v1.Document> {
    return this.retryingShed(() => this.uploadOnce(metadata, bytes));
  }

  private uploadOnce(metadata: Partial<v1.UploadMetadata>, bytes: Uint8Array): Promise<v1.Document> {
    return new Promise((resolve, reject) => {
      const method = this.raw.knowledgeBases['uploadDocument'] as unknown as (
        md: Metadata,
        options: { deadline: Date },
        callback: (error: ServiceError | null, response: v1.Document) => void,
      ) => ClientDuplexStream<unknown, unknown>;
      const call = method.call(this.raw.knowledgeBases, this.metadata(), { deadline: this.deadline() }, (error, response) =>
        error ? reject(error) : resolve(response),
      );
      call.on('error', () => undefined);
      call.write({ metadata });
      for (let offset = 0; offset < bytes.byteLength; offset += UPLOAD_PIECE_BYTES) {
        call.write({ data: bytes.subarray(offset, offset + UPLOAD_PIECE_BYTES) });
      }
      call.end();
    });
  }

  searchEntities(request: Partial<v1.SearchEntitiesRequest>): Promise<v1.SearchEntitiesResponse> {
    return this.unary(this.raw.graph, 'searchEntities', request);
  }
  getEntity(knowledgeBase: string, entity: string): Promise<v1.EntityDetail> {
    return this.unary(this.raw.graph, 'getEntity', { knowledgeBase, entity });
  }
  getSubgraph(request: Partial<v1.GetSubgraphRequest>): Promise<v1.Subgraph> {
    return this.unary(this.raw.graph, 'getSubgraph', request);
  }
  exportGraph(knowledgeBase: string): Promise<v1.Subgraph> {
    return this.unary(this.raw.graph, 'exportGraph', { knowledgeBase });
  }
  updateEntity(request: Partial<v1.UpdateEntityRequest>): Promise<v1.Entity> {
    return this.unary(this.raw.graph, 'updateEntity', request);
  }
  deleteEntity(knowledgeBase: string, entityId: string): Promise<v1.GraphEdit> {
    return this.unary(this.raw.graph, 'deleteEntity', { knowledgeBase, entityId });
  }
  updateRelationship(request: Partial<v1.UpdateRelationshipRequest>): Promise<v1.Relationship> {
    return this.unary(this.raw.graph, 'updateRelationship', request);
  }
  deleteRelationship(knowledgeBase: string, relationshipId: string): Promise<v1.GraphEdit> {
    return this.unary(this.raw.graph, 'deleteRelationship', { knowledgeBase, relationshipId });
  }
  mergeEntities(knowledgeBase: string, sourceEntityId: string, targetEntityId: string): Promise<v1.MergeEntitiesResponse> {
    return this.unary(this.raw.graph, 'mergeEntities', { knowledgeBase, sourceEntityId, targetEntityId });
  }
  createSynopsis(request: Partial<v1.CreateSynopsisRequest>): Promise<v1.EntityDetail> {
    return this.unary(this.raw.graph, 'createSynopsis', request);
  }
  undoGraphEdit(knowledgeBase: string, editId: string): Promise<v1.GraphEdit> {
    return this.unary(this.raw.graph, 'undoGraphEdit', { knowledgeBase, editId });
  }
  listGraphEdits(knowledgeBase: string, limit = 0): Promise<v1.ListGraphEditsResponse> {
    return this.unary(this.raw.graph, 'listGraphEdits', { knowledgeBase, limit });
  }
  listCommunities(knowledgeBase: string): Promise<v1.ListCommunitiesResponse> {
    return this.unary(this.raw.graph, 'listCommunities', { knowledgeBase });
  }
  getCommunity(knowledgeBase: string, communityId: string): Promise<v1.CommunityDetail> {
    return this.unary(this.raw.graph, 'getCommunity', { knowledgeBase, communityId });
  }
  /** A rebuild may make one LLM call per community: its deadline is `timeoutMs` (default an hour), not the client's. */
  rebuildCommunities(knowledgeBase: string, incremental = false, timeoutMs = 3_600_000): Promise<v1.RebuildCommunitiesResponse> {
    return this.unary(this.raw.graph, 'rebuildCommunities', { knowledgeBase, incremental }, undefined, timeoutMs);
  }

  /** `headers` adds call metadata (services forward the tenant this way). */
  retrieveChunks(request: Partial<v1.RetrieveChunksRequest>, headers?: Record<string, string>): Promise<v1.RetrieveChunksResponse> {
    return this.unary(this.raw.retrieval, 'retrieveChunks', request, headers);
  }
  retrieveGraph(request: Partial<v1.RetrieveGraphRequest>, headers?: Record<string, string>): Promise<v1.GraphContext> {
    return this.unary(this.raw.retrieval, 'retrieveGraph', request, headers);
  }
  retrieve(request: Partial<v1.RetrieveRequest>, headers?: Record<string, string>): Promise<v1.RetrieveResponse> {
    return this.unary(this.raw.retrieval, 'retrieve', request, headers);
  }

  ask(request: Partial<v1.ChatRequest>): Promise<v1.Answer> {
    return this.unary(this.raw.chat as never, 'ask', request);
  }

  listChats(request: Partial<v1.ListChatsRequest> = {}): Promise<v1.ListChatsResponse> {
    return this.unary(this.raw.chat, 'listChats', request);
  }
  getChat(chatId: string): Promise<v1.ChatDetail> {
    return this.unary(this.raw.chat, 'getChat', { chatId });
  }
  deleteChat(chatId: string): Promise<v1.DeleteChatResponse> {
    return this.unary(this.raw.chat, 'deleteChat', { chatId });
  }
  createChatEngine(engine: Partial<v1.ChatEngine>): Promise<v1.ChatEngine> {
    return this.unary(this.raw.chat, 'createChatEngine', { engine });
  }
  getChatEngine(name: string): Promise<v1.ChatEngine> {
    return this.unary(this.raw.chat, 'getChatEngine', { name });
  }
  listChatEngines(): Promise<v1.ListChatEnginesResponse> {
    return this.unary(this.raw.chat, 'listChatEngines', {});
  }
  /** Replaces the settings of the engine `name` with `engine`'s. */
  updateChatEngine(name: string, engine: Partial<v1.ChatEngine>): Promise<v1.ChatEngine> {
    return this.unary(this.raw.chat, 'updateChatEngine', { name, engine });
  }
  deleteChatEngine(name: string): Promise<v1.DeleteChatEngineResponse> {
    return this.unary(this.raw.chat, 'deleteChatEngine', { name });
  }

  /**
   * The chat's events as they arrive. A chat the server sheds before its first event is sent
   * again as a unary call would be; one that fails after an event is not (its answer has begun).
   */
  async *chat(request: Partial<v1.ChatRequest>): AsyncGenerator<v1.ChatEvent> {
    const method = this.raw.chat['chat'] as (req: unknown, md: Metadata, options: { deadline: Date }) => ClientReadableStream<v1.ChatEvent>;
    const deadline = this.deadline();
    let shed: unknown;
    for (;;) {
      const call = method.call(this.raw.chat, request, this.metadata(), { deadline });
      let started = false;
      try {
        for await (const event of call) {
          started = true;
          yield event as v1.ChatEvent;
        }
        return;
      } catch (error) {
        if (started) throw error;
        shed = await this.waitOutShed(error, shed, deadline);
      } finally {
        // A consumer that stops early (a closed HTTP stream) ends the server's work too.
        call.cancel();
      }
    }
  }

  close(): void {
    for (const client of Object.values(this.raw)) (client as Client).close();
  }

  private unary<Res>(client: Client & Record<string, unknown>, method: string, request: unknown, headers?: Record<string, string>, timeoutMs?: number): Promise<Res> {
    const deadline = timeoutMs === undefined ? this.deadline() : new Date(Date.now() + timeoutMs);
    return this.retryingShed(
      () =>
        new Promise<Res>((resolve, reject) => {
          const fn = client[method] as Unary<unknown, Res>;
          fn.call(client, request, this.metadata(headers), { deadline }, (error, response) => (error ? reject(error) : resolve(response)));
        }),
      deadline,
    );
  }

  /** Runs a call again while the server sheds it and the wait it asks for ends before the deadline. */
  private async retryingShed<Res>(call: () => Promise<Res>, deadline = this.deadline()): Promise<Res> {
    let shed: unknown;
    for (;;) {
      try {
        return await call();
      } catch (error) {
        shed = await this.waitOutShed(error, shed, deadline);
      }
    }
  }

  /**
   * After a failed attempt: waits the retry-after-ms of a shed call and resolves to it (the
   * refusal to report should the retries run out), or throws when the call is not to be retried.
   */
  private async waitOutShed(error: unknown, previousShed: unknown, deadline: Date): Promise<unknown> {
    // A retry that ran out of time says less than the refusal that caused it.
    if (previousShed !== undefined && (error as Partial<ServiceError>).code === status.DEADLINE_EXCEEDED) throw previousShed;
    const waitMs = this.options.retryShed === false ? 0 : shedRetryAfterMs(error);
    if (waitMs <= 0 || Date.now() + waitMs >= deadline.getTime()) throw error;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    return error;
  }

  private metadata(headers: Record<string, string> = {}): Metadata {
    const metadata = new Metadata();
    if (this.options.apiKey) metadata.set('authorization', `Bearer ${this.options.apiKey}`);
    if (this.options.actor) metadata.set(ACTOR_HEADER, this.options.actor);
    for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
    return metadata;
  }

  private deadline(): Date {
    return new Date(Date.now() + this.timeoutMs);
  }
}

/** The `retry-after-ms` a server sent with a RESOURCE_EXHAUSTED it shed a call with; 0 for any other error. */
function shedRetryAfterMs(error: unknown): number {
  const { code, metadata } = error as Partial<ServiceError>;
  if (code !== status.RESOURCE_EXHAUSTED || metadata === undefined) return 0;
  const value = Number(metadata.get(RETRY_AFTER_HEADER)[0] ?? 0);
  return Number.isFinite(value) && value > 0 ? value : 0;
}
