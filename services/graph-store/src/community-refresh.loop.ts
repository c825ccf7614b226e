import type { KbScope } from '@trellis/contracts';
import type { CommunityRefreshResult } from '@trellis/graph';
import type { CommunityRepository } from '@trellis/storage';

export interface CommunityRefreshTiming {
  /** How long a knowledge base's graph must stay unchanged before its communities are refreshed. */
  readonly quietMs: number;
  /** How often due refreshes are looked for. */
  readonly pollMs: number;
}

/**
 * Indexing writes a graph chunk by chunk; refreshing communities after each would redo the same
 * work hundreds of times. Every graph change records its time (markCommunitiesChanged), and this
 * loop refreshes a knowledge base once it has been quiet for `quietMs`: a debounce that holds
 * across processes, since the times live in the shared store. Refreshes run one at a time.
 */
export const COMMUNITY_REFRESH_TIMING: CommunityRefreshTiming = { quietMs: 5_000, pollMs: 2_000 };

export class CommunityRefreshLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly communities: Pick<CommunityRepository, 'listCommunityRefreshesDue'>,
    private readonly refresh: (scope: KbScope) => Promise<CommunityRefreshResult | null>,
    private readonly onError: (error: Error, scope: KbScope | null) => void,
    private readonly timing: CommunityRefreshTiming = COMMUNITY_REFRESH_TIMING,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      this.running ??= this.runDue().then(
        () => undefined,
        () => undefined,
      ).finally(() => (this.running = undefined));
    }, this.timing.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Refreshes every knowledge base that is due now; resolves to how many were refreshed. */
  async runDue(): Promise<number> {
    let due: KbScope[];
    try {
      due = await this.communities.listCommunityRefreshesDue(new Date(this.now() - this.timing.quietMs).toISOString());
    } catch (error) {
      this.onError(error as Error, null);
      return 0;
    }
    let refreshed = 0;
    for (const scope of due) {
      try {
        if ((await this.refresh(scope)) !== null) refreshed++;
      } catch (error) {
        // One knowledge base failing must not starve the others; it stays due and is retried.
        this.onError(error as Error, scope);
      }
    }
    return refreshed;
  }
}
