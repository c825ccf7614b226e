import type { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { statusName } from './output';

/**
 * `trellis rm`: deletes the named documents (by id or source URI) and, with `failed`, every
 * document whose indexing failed. Resolves to the exit code: 1 when a name matched nothing.
 */
export async function removeDocuments(client: TrellisClient, kb: string, references: readonly string[], options: { failed: boolean }, out: NodeJS.WritableStream): Promise<number> {
  if (references.length === 0 && !options.failed) throw new Error('name the documents to delete (id or source URI), or use --failed');
  const documents = await client.listAllDocuments(kb);
  const chosen = new Map<string, v1.Document>();
  let missing = 0;
  for (const reference of references) {
    const matches = documents.filter((d) => d.id === reference || d.sourceUri === reference);
    if (matches.length === 0) {
      out.write(`  ✗ ${reference}  no such document in ${kb}\n`);
      missing++;
    }
    for (const d of matches) chosen.set(d.id, d);
  }
  if (options.failed) for (const d of documents) if (statusName(d.status) === 'failed') chosen.set(d.id, d);
  for (const d of chosen.values()) {
    await client.deleteDocument(kb, d.id);
    out.write(`  - ${d.sourceUri}  (${d.id}, ${statusName(d.status)})\n`);
  }
  out.write(`deleted ${chosen.size} document(s)\n`);
  return missing > 0 ? 1 : 0;
}
