import type { TokenUsage } from '@trellis/models';

export type ItemKind = 'reply' | 'entity' | 'relationship';
export type ItemOutcome = 'kept' | 'repaired' | 'dropped' | 'added';

/** Why an item was repaired, dropped or added: a closed set, so metric series stay bounded. */
export type ItemReason =
  | 'valid'
  | 'extracted_from_text'
  | 'unparseable'
  | 'wrong_shape'
  | 'not_an_object'
  | 'missing_name'
  | 'missing_endpoint'
  | 'self_loop'
  | 'duplicate'
  | 'type_defaulted'
  | 'type_not_allowed'
  | 'truncated'
  | 'attributes_invalid'
  | 'label_defaulted'
  | 'strength_defaulted'
  | 'strength_clamped'
  | 'relationship_endpoint';

export interface ItemCount {
  readonly kind: ItemKind;
  readonly outcome: ItemOutcome;
  readonly reason: ItemReason;
  readonly count: number;
}

/** What extracting one chunk took: calls and tokens, and what became of each item the model returned. */
export class ExtractionReport {
  calls = 0;
  inputTokens = 0;
  outputTokens = 0;
  /** The calls' input as Trellis counts prompts (what ingest estimates count), beside the provider's count. */
  countedInputTokens = 0;
  private readonly counts = new Map<string, ItemCount>();

  addCall(usage: TokenUsage | undefined, countedInputTokens = 0): void {
    this.calls++;
    this.countedInputTokens += countedInputTokens;
    this.inputTokens += usage?.inputTokens ?? 0;
    this.outputTokens += usage?.outputTokens ?? 0;
  }

  count(kind: ItemKind, outcome: ItemOutcome, reason: ItemReason): void {
    const key = `${kind}|${outcome}|${reason}`;
    const current = this.counts.get(key);
    this.counts.set(key, { kind, outcome, reason, count: (current?.count ?? 0) + 1 });
  }

  items(): ItemCount[] {
    return [...this.counts.values()];
  }

  /** How many items of a kind ended with that outcome (and reason, when given). */
  total(kind: ItemKind, outcome: ItemOutcome, reason?: ItemReason): number {
    return this.items()
      .filter((c) => c.kind === kind && c.outcome === outcome && (reason === undefined || c.reason === reason))
      .reduce((sum, c) => sum + c.count, 0);
  }
}
