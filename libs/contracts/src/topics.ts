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
