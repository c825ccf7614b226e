// CPU seconds of a process tree, read from Linux /proc (what bench:peer and bench:standalone report).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * User + system CPU seconds of `pid` (all its threads), of its children it has waited for,
 * and of its live descendants.
 * @param {number} pid
 * @returns {number}
 */
export function treeCpuSeconds(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 0; // gone between listing and reading
  }
  // Fields after the parenthesised command name: state is field 3, utime..cstime are 14..17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / ticksPerSecond;
  return own + childrenOf(pid).reduce((sum, child) => sum + treeCpuSeconds(child), 0);
}

/** @returns {number[]} */
function childrenOf(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}
