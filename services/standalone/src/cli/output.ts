import { status } from '@grpc/grpc-js';
import type { v1 } from '@trellis/contracts';

/** One line of text for an error: gRPC errors by their details and status name. */
export function describeError(error: unknown): string {
  const e = error as { code?: number; details?: string; message?: string };
  if (typeof e.code === 'number' && typeof e.details === 'string') {
    if (e.code === status.UNAVAILABLE) return `cannot reach the Trellis server (${e.details}); start it with \`npm start\`, or use --embedded`;
    return `${e.details} (${status[e.code] ?? e.code})`;
  }
  return e.message ?? String(error);
}

export function statusName(s: v1.IndexStatus | string): string {
  return String(s).replace('INDEX_STATUS_', '').toLowerCase();
}

/** "12 graphed, 3 embedded" */
export function chunkSummary(document: v1.Document): string {
  const parts = document.chunkCounts.filter((c) => c.count > 0).map((c) => `${c.count} ${statusName(c.status)}`);
  return parts.length === 0 ? '-' : parts.join(', ');
}

export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** "ingestion 4 ms · chunking 31 ms · extraction 1.2 s (2 failed)" */
export function stageSummary(document: v1.Document): string {
  const duration = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms} ms`);
  const parts = document.stages.map((s) => `${s.name} ${duration(s.durationMs)}${s.failures > 0 ? ` (${s.failures} failed)` : ''}`);
  return parts.length === 0 ? '-' : parts.join(' · ');
}
