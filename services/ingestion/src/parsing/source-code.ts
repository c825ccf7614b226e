/**
 * A source file as markdown: its name as the heading and its text as one fenced block of its
 * language. The fence is longer than any run of backticks in the file, so no line of the
 * file can close it (a markdown file's own code fences inside a `.ts` template, say).
 */
export function sourceAsMarkdown(filename: string, language: string, code: string): string {
  let longest = 0;
  for (const run of code.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
  const fence = '`'.repeat(Math.max(3, longest + 1));
  const name = filename.split(/[\\/]/).pop() || filename;
  return `# ${name}\n\n${fence}${language}\n${code}\n${fence}\n`;
}
