import { setFlagsFromString } from 'node:v8';

/**
 * Sets how far V8 lets the JavaScript heap grow past what its last full collection kept
 * (TRELLIS_HEAP_GROWTH_PERCENT) for this process: V8's flags are the process's, so the main
 * thread and every worker thread, started before or after, follow it. A server keeps large
 * long-lived indexes and makes short-lived garbage with every question, and V8's own rule
 * on a large machine waits until the heap is about four times its live size before a full
 * collection. A --heap-growing-percent given to node itself wins. Returns the flag set, if any.
 */
export function applyHeapGrowth(percent: number, execArgv: readonly string[] = process.execArgv, setFlags: (flags: string) => void = setFlagsFromString): string | null {
  if (percent <= 0 || execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg))) return null;
  const flag = `--heap-growing-percent=${Math.round(percent)}`;
  setFlags(flag);
  return flag;
}
