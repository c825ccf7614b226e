import { readdir, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';

/**
 * The file types the server parses. Read from ingestion's own table, but from its module
 * alone: the package's index loads the whole ingestion service, which costs every CLI
 * command half a second of start-up.
 */
/* eslint-disable-next-line @typescript-eslint/no-require-imports */
const { SUPPORTED_EXTENSIONS } = require('@trellis/ingestion/dist/parsing/mime-types') as Pick<typeof import('@trellis/ingestion'), 'SUPPORTED_EXTENSIONS'>;

export interface InputFile {
  /** Absolute path. */
  readonly path: string;
  /** What the user sees and the document's source identity. */
  readonly display: string;
}

/**
 * Expands paths to files: directories are walked recursively (hidden entries and
 * node_modules skipped) keeping supported types; files named explicitly are always kept so
 * an unsupported type gets its clear error from the server.
 */
export async function expandPaths(paths: readonly string[]): Promise<{ files: InputFile[]; skipped: string[] }> {
  const files: InputFile[] = [];
  const skipped: string[] = [];
  const supported = new Set(SUPPORTED_EXTENSIONS);
  for (const input of paths) {
    const root = resolve(input);
    const info = await stat(root).catch(() => null);
    if (info === null) throw new Error(`no such file or directory: ${input}`);
    if (info.isFile()) {
      files.push({ path: root, display: input });
      continue;
    }
    for (const path of await walk(root)) {
      const extension = path.split('.').pop()?.toLowerCase() ?? '';
      const display = join(input, relative(root, path));
      if (supported.has(extension)) files.push({ path, display });
      else skipped.push(display);
    }
  }
  return { files, skipped };
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}
