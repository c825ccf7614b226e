import type { TopicName } from '@trellis/contracts';
import type { Logger } from '@trellis/observability';
import type { DocumentRepository, PipelineStage } from '@trellis/storage';

/** Which stage of a document's indexing handling each topic is. */
const STAGE_OF_TOPIC: Readonly<Partial<Record<TopicName, PipelineStage>>> = {
  'document.ingested': 'chunking',
  'chunk.ready': 'extraction',
  'chunk.extracted': 'graph',
};

interface EventContext {
  tenantId: string;
  knowledgeBaseId: string;
  documentId: string;
  documentVersion: number;
}

/**
 * Records, per document version, when each stage started and finished, how many events it
 * handled, and its last error: what `trellis status` and GetDocument show. Recording never
 * fails the event: a lost timing is logged, not retried.
 */
export class PipelineStages {
  constructor(
    private readonly documents: Pick<DocumentRepository, 'recordStage'>,
    private readonly logger: Logger,
  ) {}

  async record(topic: TopicName, payload: unknown, startedAt: Date, error?: Error): Promise<void> {
    const stage = STAGE_OF_TOPIC[topic];
    const context = (payload as { context?: EventContext } | undefined)?.context;
    if (!stage || !context?.documentId) return;
    try {
      await this.documents.recordStage(
        { tenantId: context.tenantId, kbId: context.knowledgeBaseId },
        { documentId: context.documentId, version: context.documentVersion, stage, startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), error: error?.message ?? null },
      );
    } catch (failure) {
      this.logger.warn({ topic, err: (failure as Error).message }, 'could not record the stage timing');
    }
  }
}
