import type { LlmUsage } from './records';

/** The longest a debt can grow: one minute's budget, so an oversized call cannot stall a model for long. */
const MAX_DEBT_MINUTES = 1;

export interface BucketState {
  tokens: number;
  updatedMs: number;
}

/**
 * One token-bucket decision, the same on every engine: refill since
 * the last update, then take `amount` or say how long to wait. A new bucket starts full.
 */
export function takeTokens(
  state: BucketState | null,
  amount: number,
  perMinute: number,
  nowMs: number,
  force: boolean,
): { next: BucketState; waitMs: number } {
  const elapsed = state === null ? 0 : Math.max(0, nowMs - state.updatedMs);
  const available = state === null ? perMinute : Math.min(perMinute, state.tokens + (elapsed * perMinute) / 60_000);
  const wanted = force ? amount : Math.min(amount, perMinute);
  if (force || available >= wanted) {
    return { next: { tokens: Math.max(-perMinute * MAX_DEBT_MINUTES, available - wanted), updatedMs: nowMs }, waitMs: 0 };
  }
  return { next: { tokens: available, updatedMs: nowMs }, waitMs: Math.ceil(((wanted - available) * 60_000) / perMinute) };
}

/** Slots 0..slots-1 that a new lease may take: missing rows, released ones and expired ones. */
export function freeSlots(rows: ReadonlyArray<{ slot: number; holder: string; expiresMs: number }>, slots: number, nowMs: number): { missing: number[]; free: number[] } {
  const bySlot = new Map(rows.map((r) => [r.slot, r]));
  const missing: number[] = [];
  const free: number[] = [];
  for (let slot = 0; slot < slots; slot++) {
    const row = bySlot.get(slot);
    if (row === undefined) missing.push(slot);
    else if (row.holder === '' || row.expiresMs <= nowMs) free.push(slot);
  }
  return { missing, free };
}

export const NO_LLM_USAGE: LlmUsage = { calls: 0, inputTokens: 0, outputTokens: 0, estimatedCostUsd: 0, cacheHits: 0 };

export function toLlmUsage(row: Record<string, unknown> | undefined): LlmUsage {
  if (row === undefined) return { ...NO_LLM_USAGE };
  return {
    calls: Number(row.calls ?? 0),
    inputTokens: Number(row.input_tokens ?? 0),
    outputTokens: Number(row.output_tokens ?? 0),
    estimatedCostUsd: Number(row.estimated_cost_usd ?? 0),
    cacheHits: Number(row.cache_hits ?? 0),
  };
}

export const LLM_USAGE_SUMS =
  'COALESCE(SUM(calls), 0) AS calls, COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens, ' +
  'COALESCE(SUM(estimated_cost_usd), 0) AS estimated_cost_usd, COALESCE(SUM(cache_hits), 0) AS cache_hits';
