import {
  ChunkExtracted,
  ChunkReady,
  DocumentIngested,
} from './generated/trellis/events/v1/indexing';

/** Encodes and decodes one topic's payload (generated protobuf codecs fit this shape). */
export interface PayloadCodec<T> {
  encode(message: T): { finish(): Uint8Array };
  decode(input: Uint8Array): T;
  fromPartial?(object: unknown): T;
}

/**
 * The indexing topics: name → payload type and schema version. Producers and consumers
 * are typed by this map, so a payload that does not match its topic does not compile.
 */
export const TOPICS = {
  'document.ingested': { codec: DocumentIngested as PayloadCodec<DocumentIngested>, schemaVersion: 1 },
  'chunk.ready': { codec: ChunkReady as PayloadCodec<ChunkReady>, schemaVersion: 1 },
  'chunk.extracted': { codec: ChunkExtracted as PayloadCodec<ChunkExtracted>, schemaVersion: 1 },
} as const;

export type TopicName = keyof typeof TOPICS;

export type TopicPayload<T extends TopicName> =
  (typeof TOPICS)[T]['codec'] extends PayloadCodec<infer P> ? P : never;

/** Dead-letter topic of a topic. */
export function deadLetterTopic(topic: TopicName): string {
  return `${topic}.dlq`;
}

export const ALL_TOPICS = Object.keys(TOPICS) as TopicName[];

/**
 * The consumer group that handles each indexing topic: one stage, one service. The sweeper asks
 * how far behind these groups are, wherever it runs.
 */
export const INDEXING_CONSUMER_GROUPS: Readonly<Record<TopicName, string>> = {
  'document.ingested': 'chunking',
  'chunk.ready': 'extraction',
  'chunk.extracted': 'graph-store',
};

/**
 * An event written in the same transaction as the change it announces (a transactional
 * outbox), published once that transaction has committed: a crash or a broker outage between
 * the commit and the publish delays the event, it cannot lose it.
 */
export interface OutboxEvent {
  /** Unique: what the row is deleted by once the broker has the event. */
  readonly id: string;
  readonly topic: TopicName;
  readonly key: string;
  /** The payload encoded with its topic's codec. */
  readonly payload: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
}
