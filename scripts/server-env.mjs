// The environment a Trellis server process starts with: these settings, then the user's own
// environment, which wins. `npm start`, the benchmarks and (as ENV lines) the container image
// use it; deploy/test/images.spec.ts checks the image says the same.

/**
 * MALLOC_MMAP_THRESHOLD_: glibc gives each allocation of this size or more its own mapping,
 * returned to the system when it is freed. Left unset, the threshold rises to the largest such
 * block freed so far (up to 32 MB); after the read threads have passed a page of chunk texts
 * or a slice of a matrix, blocks of that size come from the thread's arena instead, and their
 * pages stay resident once freed. At 100k chunks that held 120–190 MB of a standalone server's
 * RSS after its first questions (docs/benchmarks.md). Setting the threshold, here to glibc's
 * own default of 128 KiB, keeps it from rising.
 */
export const SERVER_ENV = Object.freeze({ MALLOC_MMAP_THRESHOLD_: '131072' });

/** `env` with the server settings it does not set itself. */
export const serverEnv = (env = process.env) => ({ ...SERVER_ENV, ...env });
