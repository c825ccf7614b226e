/** The terms of a text, counted (porterDocumentTerms). */
export interface DocumentTerms {
  /** Term → occurrences in the text. */
  frequencies: ReadonlyMap<string, number>;
  /** Number of indexed terms in the text: BM25's document length. */
  length: number;
}
