import type { ModelCallObserver, ModelCallRecord } from '@trellis/models';
import { estimateCost } from '@trellis/observability';
import type { LlmPriceTable, TrellisMetrics } from '@trellis/observability';

/** Turns provider calls into the LLM and embedding metrics, with cost from the price table. */
export class ModelMetricsObserver implements ModelCallObserver {
  constructor(
    private readonly metrics: TrellisMetrics,
    private readonly prices: LlmPriceTable,
  ) {}

  record(call: ModelCallRecord): void {
    const { model, operation } = call;
    this.metrics.llmRequests.inc({ model, operation, outcome: call.outcome });
    this.metrics.llmDuration.observe({ model, operation }, call.durationSeconds);
    if (operation === 'embeddings') {
      this.metrics.embeddingBatchDuration.observe({ model }, call.durationSeconds);
      if (call.batchSize !== undefined) this.metrics.embeddingTexts.inc({ model }, call.batchSize);
    }
    const input = call.inputTokens ?? 0;
    const output = call.outputTokens ?? 0;
    if (input > 0) this.metrics.llmTokens.inc({ model, direction: 'input' }, input);
    if (output > 0) this.metrics.llmTokens.inc({ model, direction: 'output' }, output);
    const cost = estimateCost(this.prices, model, input, output);
    if (cost > 0) this.metrics.llmCost.inc({ model }, cost);
  }
}
