import type { v1 } from '@trellis/contracts';

/** How much of a conversation a turn reads (condensation, refinement, the answer's model). */
export interface HistoryBounds {
  /** Question-and-answer pairs, most recent first. */
  readonly turns: number;
  /** Characters of all the messages kept together. */
  readonly chars: number;
}

/** TRELLIS_CHAT_HISTORY_TURNS and TRELLIS_CHAT_HISTORY_CHARS default to these (see libs/config). */
export const DEFAULT_HISTORY_BOUNDS: HistoryBounds = { turns: 6, chars: 6000 };

/**
 * The most recent messages within the bounds, oldest first: at most `turns` pairs, and only as
 * many as fit in `chars` together (the newest message alone is cut to fit, keeping its start).
 */
export function boundHistory(history: readonly v1.ChatMessage[], bounds: HistoryBounds): v1.ChatMessage[] {
  const recent = bounds.turns <= 0 ? [] : history.slice(-bounds.turns * 2);
  const kept: v1.ChatMessage[] = [];
  let total = 0;
  for (let i = recent.length - 1; i >= 0; i--) {
    const message = recent[i]!;
    if (total + message.content.length > bounds.chars) {
      if (kept.length === 0 && bounds.chars > 0) kept.push({ role: message.role, content: message.content.slice(0, bounds.chars) });
      break;
    }
    total += message.content.length;
    kept.push(message);
  }
  return kept.reverse();
}
