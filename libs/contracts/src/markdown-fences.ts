/**
 * Fenced code blocks as CommonMark defines them, shared by every service that reads markdown
 * (ingestion reduces HTML around them, chunking keeps them whole, chat quotes them whole).
 */

/** The fence a markdown line opens (its run of backticks or tildes), or undefined. */
export function fenceOpened(line: string): string | undefined {
  const match = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
  if (match === null) return undefined;
  // A backtick fence's info string holds no backtick (CommonMark), else the line is inline code.
  if (match[1]![0] === '`' && match[2]!.includes('`')) return undefined;
  return match[1]!;
}

/** Whether `line` closes the fence opened by `marker`: the same character, at least as many. */
export function closesFence(line: string, marker: string): boolean {
  const match = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
  return match !== null && match[1]![0] === marker[0] && match[1]!.length >= marker.length;
}
