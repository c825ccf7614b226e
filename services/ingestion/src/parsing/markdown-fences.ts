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

/**
 * A markdown text's lines as runs outside and inside fenced code blocks, in order; the fence
 * lines belong to the code run. Rejoining every run with '\n' gives the text back.
 */
export function fencedRuns(text: string): { readonly code: boolean; readonly text: string }[] {
  const runs: { code: boolean; text: string }[] = [];
  let lines: string[] = [];
  let fence: string | undefined;
  const flush = (code: boolean) => {
    if (lines.length > 0) runs.push({ code, text: lines.join('\n') });
    lines = [];
  };
  for (const line of text.split('\n')) {
    if (fence === undefined) {
      fence = fenceOpened(line);
      if (fence !== undefined) flush(false);
      lines.push(line);
    } else {
      lines.push(line);
      if (closesFence(line, fence)) {
        fence = undefined;
        flush(true);
      }
    }
  }
  flush(fence !== undefined);
  return runs;
}
