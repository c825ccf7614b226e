import { describe, expect, it } from 'vitest';
import { budgetState, exceededBy, hasLlmBudget, monthStart } from './kb-llm-budget';

const spent = (tokens: number, estimatedCostUsd = 0) => ({ calls: 1, tokens, estimatedCostUsd });
const now = new Date('2026-11-30T15:00:00.000Z');

describe('budgetState', () => {
  it('is not exhausted below every limit, nor without limits', () => {
    expect(budgetState({ dailyTokens: 100, monthlyTokens: 1000, dailyUsd: 1, monthlyUsd: 10 }, spent(99, 0.99), spent(999, 9.99), now)).toMatchObject({ exhausted: '', resetsAt: '' });
    expect(hasLlmBudget({ dailyTokens: 0, monthlyTokens: 0, dailyUsd: 0, monthlyUsd: 0 })).toBe(false);
    expect(hasLlmBudget({ dailyTokens: 0, monthlyTokens: 0, dailyUsd: 0.5, monthlyUsd: 0 })).toBe(true);
  });

  it('names the limit reached and when its period rolls over: the next UTC day or month', () => {
    expect(budgetState({ dailyTokens: 100, monthlyTokens: 0, dailyUsd: 0, monthlyUsd: 0 }, spent(100), spent(100), now)).toMatchObject({
      exhausted: 'daily token budget of 100 reached',
      resetsAt: '2026-12-01T00:00:00.000Z',
    });
    expect(budgetState({ dailyTokens: 0, monthlyTokens: 0, dailyUsd: 0, monthlyUsd: 2 }, spent(5, 1), spent(50, 2.5), new Date('2026-12-31T23:59:00.000Z'))).toMatchObject({
      exhausted: 'monthly budget of $2 reached',
      resetsAt: '2027-01-01T00:00:00.000Z',
    });
  });

  it('waits for the latest roll-over when a daily and a monthly limit are both reached', () => {
    const state = budgetState({ dailyTokens: 10, monthlyTokens: 20, dailyUsd: 0, monthlyUsd: 0 }, spent(15), spent(25), now);
    expect(state.exhausted).toBe('daily token budget of 10 reached; monthly token budget of 20 reached');
    expect(state.resetsAt).toBe('2026-12-01T00:00:00.000Z');
    expect(budgetState({ dailyTokens: 10, monthlyTokens: 20, dailyUsd: 0, monthlyUsd: 0 }, spent(15), spent(25), new Date('2026-11-15T00:00:00.000Z')).resetsAt).toBe('2026-12-01T00:00:00.000Z');
  });

  it('starts the month on its first UTC day', () => {
    expect(monthStart(new Date('2026-02-28T23:00:00.000Z'))).toBe('2026-02-01');
  });
});

describe('exceededBy', () => {
  it('names each limit more work would pass, with what was spent, and nothing when it fits', () => {
    const state = budgetState({ dailyTokens: 1000, monthlyTokens: 0, dailyUsd: 0, monthlyUsd: 1 }, spent(400, 0.5), spent(400, 0.5), now);
    expect(exceededBy(state, 600, 0.4)).toBe('');
    expect(exceededBy(state, 601, 0.6)).toBe(
      'this ingest would pass the daily token budget (400 of 1000 spent today) and the monthly budget ($0.5000 of $1 spent this month): LLM extraction would pause when it is reached',
    );
  });
});
