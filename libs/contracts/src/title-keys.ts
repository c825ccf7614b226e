/**
 * What a document title and an entity name are compared by: case, Unicode forms and spacing
 * ignored, and a trailing parenthesised qualifier dropped ("Mercury (planet)" is a page about
 * Mercury), the convention encyclopedias and wikis use to tell pages of one name apart.
 * Storage keeps each document's key (documents.title_key) so a name finds its page by index.
 */
export function titleKey(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\s*\([^()]*\)$/, '')
    .slice(0, 500);
}
