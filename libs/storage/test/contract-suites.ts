import type { TrellisStore } from '../src/trellis-store';
import { describeStoreContract } from './store-contract';
import { describeConcurrentGraphWritesContract } from './concurrent-graph-writes-contract';
import { describeDocumentPagingContract } from './document-paging-contract';
import { describeFullTextContract } from './full-text-contract';
import { describeLlmBudgetContract } from './llm-budget-contract';
import { describeGraphEditContract } from './graph-edits-contract';
import { describeExtractionCacheContract } from './extraction-cache-contract';
import { describeCommunityContract } from './community-contract';
import { describeChatContract } from './chat-contract';
import { describeCommunityChangeContract } from './community-change-contract';
import { describeStuckWorkContract } from './stuck-work-contract';
import { describeOutboxContract } from './outbox-contract';
import { describeSummarySampleContract } from './summary-sample-contract';
import { describeChunkProgressContract } from './chunk-progress-contract';

/**
 * The contract suites every TrellisStore adapter runs unchanged, listed once: an adapter's spec
 * calls this with a factory of stores over empty databases, then adds what only it has.
 */
export function describeStoreContracts(name: string, makeStore: () => Promise<TrellisStore>): void {
  describeStoreContract(name, makeStore);
  describeConcurrentGraphWritesContract(name, makeStore);
  describeFullTextContract(name, makeStore);
  describeDocumentPagingContract(name, makeStore);
  describeLlmBudgetContract(name, makeStore);
  describeGraphEditContract(name, makeStore);
  describeExtractionCacheContract(name, makeStore);
  describeChunkProgressContract(name, makeStore);
  describeSummarySampleContract(name, makeStore);
  describeStuckWorkContract(name, makeStore);
  describeOutboxContract(name, makeStore);
  describeCommunityContract(name, makeStore);
  describeChatContract(name, makeStore);
  describeCommunityChangeContract(name, makeStore);
}
