import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { activeTraceFields } from './tracing';

export type { Logger } from 'pino';

/** Keys whose values never reach a log line, at the top level or one object down. */
const REDACTED_KEYS = ['apiKey', 'api_key', 'authorization', 'password', 'secret', 'token', 'internalToken', 'text', 'prompt', 'content', 'dbUrl'];

/**
 * Structured JSON logs with the service name on every line, and the trace and span id of
 * the active span when one is recording (so a log line leads to its trace). Callers add
 * `tenant` where they know it. Secrets and document text are redacted wherever they appear
 * under the keys above.
 */
export function createLogger(serviceName: string, level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name: serviceName,
    level,
    base: { service: serviceName },
    mixin: () => activeTraceFields(),
    redact: {
      paths: REDACTED_KEYS.flatMap((key) => [key, `*.${key}`]),
      censor: '[redacted]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}

export const LOGGER = Symbol.for('trellis.logger');
