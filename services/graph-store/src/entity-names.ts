/**
 * The form of a name that entity resolution compares: case, accents, punctuation, a leading
 * article and possessive endings do not make two entities different.
 */
export function normalizeEntityName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/['’]s\b/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .replace(/^(the|a|an) /, '');
}
