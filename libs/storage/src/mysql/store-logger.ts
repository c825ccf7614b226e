/**
 * The logging the store needs, shaped like pino's `(fields, message)` calls so the services'
 * pino logger can be passed straight in. Never give it document text or the database URL.
 */
export interface StoreLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/** Structured JSON lines on stderr, for callers (the CLI, tests) that pass no logger. */
export const stderrStoreLogger: StoreLogger = {
  info: (fields, message) => writeLine('info', fields, message),
  warn: (fields, message) => writeLine('warn', fields, message),
};

function writeLine(level: string, fields: Record<string, unknown>, message: string): void {
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), name: 'trellis-storage', ...fields, msg: message })}\n`);
}
