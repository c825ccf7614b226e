import type { IHeaders, KafkaMessage } from 'kafkajs';
import type { TopicName } from '@trellis/contracts';
import type { DeadLetter } from '../event-bus';

export const HEADER = {
  schemaVersion: 'trellis-schema-version',
  traceparent: 'traceparent',
  error: 'trellis-error',
  attempts: 'trellis-attempts',
  sourceTopic: 'trellis-source-topic',
  group: 'trellis-group',
  failedAt: 'trellis-failed-at',
} as const;

/** Headers the bus adds when it dead-letters an event; removed again when it is read or replayed. */
const DEAD_LETTER_HEADERS: readonly string[] = [HEADER.error, HEADER.attempts, HEADER.sourceTopic, HEADER.group, HEADER.failedAt];

/** Error messages can embed whole responses; a dead letter only needs enough to diagnose. */
const MAX_ERROR_HEADER_LENGTH = 2_000;

/** Why and where an event was dead-lettered. */
export interface DeadLetterFailure {
  readonly sourceTopic: TopicName;
  readonly group: string;
  readonly error: string;
  readonly attempts: number;
  readonly failedAt: Date;
}

/**
 * Headers of a published event: the caller's, the schema version the payload was encoded
 * with (ours always wins: it describes the bytes), and the producer's traceparent unless the
 * caller passed one.
 */
export function publishHeaders(
  given: Readonly<Record<string, string>>,
  schemaVersion: number,
  traceparent: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = { ...given, [HEADER.schemaVersion]: String(schemaVersion) };
  if (traceparent !== undefined && traceparent !== '' && headers[HEADER.traceparent] === undefined) {
    headers[HEADER.traceparent] = traceparent;
  }
  return headers;
}

/** Headers of a dead letter: the event's own, plus why and where it failed. */
export function deadLetterHeaders(original: Readonly<Record<string, string>>, failure: DeadLetterFailure): Record<string, string> {
  return {
    ...original,
    [HEADER.error]: failure.error.slice(0, MAX_ERROR_HEADER_LENGTH),
    [HEADER.attempts]: String(failure.attempts),
    [HEADER.sourceTopic]: failure.sourceTopic,
    [HEADER.group]: failure.group,
    [HEADER.failedAt]: failure.failedAt.toISOString(),
  };
}

/** kafkajs headers as strings. Kafka allows a header name twice; the last value wins. */
export function headersToRecord(headers: IHeaders | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers ?? {})) {
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (value !== undefined) record[name] = value.toString();
  }
  return record;
}

/**
 * Reads one record of `<topic>.dlq`. Records that did not come from the bus (produced by
 * hand, say) still parse: missing facts become empty, and the failure time falls back to
 * the record's timestamp.
 */
export function parseDeadLetter(topic: TopicName, message: Pick<KafkaMessage, 'key' | 'value' | 'headers' | 'timestamp'>): DeadLetter {
  const all = headersToRecord(message.headers);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(all)) {
    if (!DEAD_LETTER_HEADERS.includes(name)) headers[name] = value;
  }
  const attempts = Number.parseInt(all[HEADER.attempts] ?? '', 10);
  return {
    topic,
    key: message.key?.toString() ?? '',
    group: all[HEADER.group] ?? '',
    error: all[HEADER.error] ?? '',
    attempts: Number.isNaN(attempts) ? 0 : attempts,
    failedAt: all[HEADER.failedAt] ?? new Date(Number(message.timestamp)).toISOString(),
    payload: Uint8Array.from(message.value ?? []),
    headers,
  };
}
