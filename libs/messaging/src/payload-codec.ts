import { TOPICS } from '@trellis/contracts';
import type { PayloadCodec, TopicName, TopicPayload } from '@trellis/contracts';

/**
 * The protobuf codec of a topic. TOPICS stores each codec under its own type, and the
 * compiler cannot narrow `TOPICS[topic]` for a generic `topic`, hence the one cast here.
 */
function codecOf<T extends TopicName>(topic: T): PayloadCodec<TopicPayload<T>> {
  return TOPICS[topic].codec as unknown as PayloadCodec<TopicPayload<T>>;
}

/** Encodes a payload with its topic's codec: what both buses put on the wire. */
export function encodePayload<T extends TopicName>(topic: T, payload: TopicPayload<T>): Uint8Array {
  return codecOf(topic).encode(payload).finish();
}

/** Decodes a payload of the topic; throws when the bytes are not one. */
export function decodePayload<T extends TopicName>(topic: T, bytes: Uint8Array): TopicPayload<T> {
  return codecOf(topic).decode(bytes);
}
