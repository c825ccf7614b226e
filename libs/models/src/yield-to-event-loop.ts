import { setImmediate } from 'node:timers/promises';

/**
 * Resolves once the event loop has run what was already queued (I/O callbacks, timers due,
 * earlier setImmediate callbacks): long work on the main thread awaits it between slices so
 * that requests and health checks are answered meanwhile.
 */
export function yieldToEventLoop(): Promise<void> {
  return setImmediate();
}
