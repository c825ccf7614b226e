import { closesFence, fenceOpened } from '@trellis/contracts';

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
