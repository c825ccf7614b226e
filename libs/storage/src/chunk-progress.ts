/**
 * Document completion without counting: `documents.chunks_remaining` holds the chunks of the
 * document's current version that are not yet in the graph. One implementation keeps it for both engines (sql/chunk-progress-sql.ts):
 *
 * - it is counted afresh only when chunking writes a version's chunks (in that transaction);
 * - afterwards it moves only when a chunk row changes into 'graphed' (−1) or out of it (+1), in
 *   the transaction of that change, so a replayed chunk, already graphed, leaves it alone;
 * - it is null until the version's chunks are written, and the chunks of an older version
 *   never move it.
 *
 * So the graph writer learns that a document is complete from one row, not from a count over
 * every chunk of the document after each chunk (quadratic per document).
 */

/** The document versions a batch of chunks belongs to, each once. */
export function versionsOf(chunks: ReadonlyArray<{ documentId: string; version: number }>): Array<{ documentId: string; version: number }> {
  return [...new Map(chunks.map((c) => [`${c.documentId}\u0000${c.version}`, { documentId: c.documentId, version: c.version }])).values()];
}
