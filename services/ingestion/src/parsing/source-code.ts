/**
 * A backtick fence for `code`: longer than any run of backticks in it, so no line of the code
 * can close it (a markdown file's own fences inside a `.ts` template, say), and at least three.
 */
export function fenceFor(code: string): string {
  let longest = 0;
  for (const run of code.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/** A source file as markdown: its name as the heading and its text as one fenced block of its language. */
export function sourceAsMarkdown(filename: string, language: string, code: string): string {
  const fence = fenceFor(code);
  const name = filename.split(/[\\/]/).pop() || filename;
  return `# ${name}\n\n${fence}${language}\n${code}\n${fence}\n`;
}
