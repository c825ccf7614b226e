// What the bench:* scripts share: options, corpus files, free ports, percentiles, the machine
// and its load average (printed beside every figure: our machines are shared).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);

/** The value after `--name` on the command line, or `fallback`. */
export const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};

/** The records of a JSONL file of the shared datasets format. */
export const readJsonl = (dir, file) => readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

export const freePort = () =>
  new Promise((ok) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

/** The p-th percentile (nearest rank); NaN for no values. */
export const percentile = (values, p) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};

/** "1.23 2.34 3.45": the 1, 5 and 15 minute load averages. */
export const loadAverage = () => loadavg().map((l) => l.toFixed(2)).join(' ');

export const machine = () => `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version}`;

/**
 * Runs a bench's main; on failure prints the error and exits at once, so a fake LLM server or a
 * child process left running cannot keep a failed bench alive.
 */
export const runBench = (main, describe = (error) => error) =>
  main().catch((error) => {
    console.error(describe(error));
    process.exit(1);
  });
