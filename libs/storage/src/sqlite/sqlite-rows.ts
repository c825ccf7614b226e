import { batches } from '../row-mappers';

/*
 * Lookups by id in this adapter write `+tenant_id` / `+kb_id`: the unary plus keeps SQLite from
 * choosing a (tenant_id, kb_id, ...) index, which would scan the whole knowledge base, over the
 * primary key.
 */

export { CHUNK_COLUMNS, ENTITY_COLUMNS, marks } from '../row-mappers';

/** SQLite caps the parameters bound to one statement: run `fn` over slices of `ids`, collecting what it returns. */
export function inBatches<T>(ids: readonly string[], fn: (batch: string[]) => T[] | void): T[] {
  const out: T[] = [];
  for (const batch of batches(ids, 400)) out.push(...(fn(batch) ?? []));
  return out;
}
