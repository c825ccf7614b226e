export * from './event-bus';
export * from './retry-policy';
export * from './in-process-event-bus';
export * from './kafka';
export * from './outbox/event-outbox';
