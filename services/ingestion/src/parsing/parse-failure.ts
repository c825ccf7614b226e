/**
 * Why a document's bytes cannot be turned into text, in words for the person who sent it.
 * A plain error (not a TrellisError) because it also crosses the parse worker's boundary;
 * the parser facade turns it into INVALID_ARGUMENT.
 */
export class ParseFailure extends Error {
  override readonly name = 'ParseFailure';
}
