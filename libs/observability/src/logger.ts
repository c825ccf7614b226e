import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Structured JSON logs with the service name on every line. Secrets and document text are
 * redacted wherever they appear under these keys.
 */
export function createLogger(serviceName: string, level: string): Logger {
  return pino({
    name: serviceName,
    level,
    base: { service: serviceName },
    redact: {
      paths: ['apiKey', '*.apiKey', 'authorization', '*.authorization', 'password', '*.password', 'text', '*.text', 'dbUrl', '*.dbUrl'],
      censor: '[redacted]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

export const LOGGER = Symbol.for('trellis.logger');
