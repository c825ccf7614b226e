import type { ResourceLimits } from 'node:worker_threads';

/**
 * Heap limits of the process's long-lived helper threads (local embedding, local extraction, the
 * front thread that takes requests): a young generation of 8 MB instead of V8's default, which
 * grows to 32 MB. Each of these threads makes short-lived objects per call and keeps few, yet
 * kept its whole young generation once it had been busy: after an ingest at 100k chunks the
 * extraction thread held 56 MB of heap with 22 MB in use, the front thread 41 with 9
 * (docs/benchmarks.md, session 34).
 */
export const HELPER_THREAD_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 8 };
