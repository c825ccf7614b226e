export { KafkaEventBus } from './kafka-event-bus';
export { ensureKafkaTopics } from './kafka-topics';
export { resolveKafkaBusConfig } from './kafka-bus.config';
export type { ConsumerCrash, KafkaBusConfig, KafkaBusLogger, KafkaConsumerTimings } from './kafka-bus.config';
export { DLQ_REPLAY_GROUP } from './kafka-names';
export { HEADER as KAFKA_HEADERS } from './kafka-headers';
