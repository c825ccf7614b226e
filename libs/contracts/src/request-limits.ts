import { TrellisError } from './errors';

/** Most ids one request may list (document_ids, entity_ids). */
export const MAX_REQUEST_IDS = 1_000;
/** Longest id a request may name: ids Trellis makes are far shorter. */
export const MAX_ID_CHARS = 256;

/**
 * The ids of a repeated request field, checked: at most `max` of them, none empty or longer
 * than MAX_ID_CHARS. Duplicates are dropped. Messages name the field as the proto spells it.
 */
export function validateIdList(ids: readonly string[], field: string, max: number = MAX_REQUEST_IDS): string[] {
  if (ids.length > max) throw TrellisError.invalid(`${field} has more than ${max} ids (${ids.length})`);
  const unique = [...new Set(ids.map((id) => id.trim()))];
  if (unique.includes('')) throw TrellisError.invalid(`${field} contains an empty id`);
  if (unique.some((id) => id.length > MAX_ID_CHARS)) throw TrellisError.invalid(`${field} contains an id longer than ${MAX_ID_CHARS} characters`);
  return unique;
}

/** `value`, refused with INVALID_ARGUMENT naming `field` when longer than `max` characters. */
export function withinLength(value: string, field: string, max: number): string {
  if (value.length > max) throw TrellisError.invalid(`${field} is longer than ${max} characters`);
  return value;
}

/** Roles a client may give to earlier turns: the system prompt is the server's alone. */
export const HISTORY_ROLES = ['user', 'assistant'] as const;

export interface HistoryLimits {
  readonly maxMessages: number;
  readonly maxMessageChars: number;
  readonly maxTotalChars: number;
}

export const DEFAULT_HISTORY_LIMITS: HistoryLimits = { maxMessages: 100, maxMessageChars: 32_000, maxTotalChars: 200_000 };

/**
 * A conversation's earlier turns, checked: a bounded number of messages and characters, and
 * roles `user` or `assistant` only (a `system` turn would let a client rewrite the prompt).
 */
export function validateChatHistory<M extends { readonly role: string; readonly content: string }>(history: readonly M[], limits: HistoryLimits = DEFAULT_HISTORY_LIMITS): readonly M[] {
  if (history.length > limits.maxMessages) throw TrellisError.invalid(`history has more than ${limits.maxMessages} messages (${history.length})`);
  let total = 0;
  for (const [i, message] of history.entries()) {
    if (!(HISTORY_ROLES as readonly string[]).includes(message.role)) {
      throw TrellisError.invalid(`history[${i}].role is "${message.role.slice(0, 32)}"; it must be ${HISTORY_ROLES.join(' or ')}`);
    }
    if (message.content.length > limits.maxMessageChars) throw TrellisError.invalid(`history[${i}].content is longer than ${limits.maxMessageChars} characters`);
    total += message.content.length;
  }
  if (total > limits.maxTotalChars) throw TrellisError.invalid(`history has more than ${limits.maxTotalChars} characters in all (${total})`);
  return history;
}
