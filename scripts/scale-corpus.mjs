// The corpus of `npm run bench:scale`: public text already on the machine, cut into passages of
// about 700 characters, in a fixed order, until there are as many as asked for. Nothing is
// downloaded and nothing is committed; the passages are cached under ~/.cache/trellis/scale-corpus.
//
// Sources, in this order (each under its own free licence, as its package says):
//   1. the Markdown documentation of the repository's npm dependencies (node_modules/**/*.md);
//   2. docstrings of Python's standard library and Debian's Python packages (via python3's ast);
//   3. Debian's English manual pages (/usr/share/man/man[1-8], roff markup stripped);
//   4. Debian's package changelogs and documents (/usr/share/doc/**/*.gz).
// The same machine and package set give the same passages; the bench prints a digest of them.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';

const PASSAGE_CHARS = 700;
const MIN_CHARS = 200;

/** Paragraphs of a text, grouped into passages of about PASSAGE_CHARS characters. */
function* passagesOf(text) {
  let current = '';
  for (const paragraph of text.split(/\n\s*\n/)) {
    const clean = paragraph.replace(/\s+/g, ' ').trim();
    if (clean.length === 0) continue;
    current = current ? `${current} ${clean}` : clean;
    while (current.length >= PASSAGE_CHARS) {
      const cut = current.lastIndexOf(' ', PASSAGE_CHARS * 1.3) > PASSAGE_CHARS / 2 ? current.lastIndexOf(' ', PASSAGE_CHARS * 1.3) : PASSAGE_CHARS;
      yield current.slice(0, cut);
      current = current.slice(cut).trim();
    }
  }
  if (current.length >= MIN_CHARS) yield current;
}

function* filesUnder(dir, accept) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path, accept);
    else if (entry.isFile() && accept(path)) yield path;
  }
}

/** Markdown: code blocks, HTML and badge lines are not prose. */
function markdownProse(text) {
  return text
    .replace(/```[\s\S]*?```/g, '\n')
    .split('\n')
    .filter((line) => !/^\s*(<|\[!\[|!\[|\|)/.test(line))
    .join('\n');
}

/** roff: requests and comments dropped, font and escape sequences removed. */
function roffProse(text) {
  return text
    .split('\n')
    .map((line) => (/^[.']\s*(SH|SS)\s/.test(line) ? `\n${line.replace(/^[.']\s*S[HS]\s+/, '')}\n` : line))
    .filter((line) => !/^[.']/.test(line))
    .join('\n')
    .replace(/\\f[A-Z0-9]|\\f\(..|\\\(..|\\[-e&|^~]|\\s[-+]?\d/g, '')
    .replace(/\\(.)/g, '$1');
}

const PYTHON_DOCSTRINGS = `
import ast, json, os, sys
for root in sys.argv[1:]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ('test', 'tests', '__pycache__'))
        for f in sorted(filenames):
            if not f.endswith('.py'): continue
            path = os.path.join(dirpath, f)
            try: tree = ast.parse(open(path, encoding='utf-8').read())
            except Exception: continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    if doc and len(doc) >= ${MIN_CHARS}:
                        name = getattr(node, 'name', os.path.relpath(path, root))
                        print(json.dumps({'title': name, 'text': doc}))
`;

function* sources(root) {
  for (const path of filesUnder(join(root, 'node_modules'), (p) => p.endsWith('.md'))) {
    yield { source: 'npm docs', title: relative(join(root, 'node_modules'), path), text: markdownProse(readFileSync(path, 'utf8')) };
  }
  try {
    const out = execFileSync('python3', ['-c', PYTHON_DOCSTRINGS, '/usr/lib/python3.11', '/usr/lib/python3/dist-packages'], { encoding: 'utf8', maxBuffer: 1 << 30 });
    for (const line of out.split('\n').filter(Boolean)) yield { source: 'python docstrings', ...JSON.parse(line) };
  } catch {
    // no python3: the other sources go on
  }
  for (let section = 1; section <= 8; section++) {
    for (const path of filesUnder(`/usr/share/man/man${section}`, (p) => p.endsWith('.gz'))) {
      yield { source: 'man pages', title: relative('/usr/share/man', path), text: roffProse(gunzipSync(readFileSync(path)).toString('utf8')) };
    }
  }
  for (const path of filesUnder('/usr/share/doc', (p) => p.endsWith('.gz'))) {
    yield { source: 'debian docs', title: relative('/usr/share/doc', path), text: gunzipSync(readFileSync(path)).toString('utf8') };
  }
}

/** `count` passages `{id, title, text, source}`, built once and cached. */
export function scaleCorpus(root, count) {
  const dir = join(process.env.TRELLIS_CACHE_DIR ?? join(homedir(), '.cache/trellis'), 'scale-corpus');
  const file = join(dir, `passages-${count}.jsonl`);
  if (existsSync(file) && statSync(file).size > 0) return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const passages = [];
  const seen = new Set();
  outer: for (const document of sources(root)) {
    let part = 0;
    for (const text of passagesOf(document.text)) {
      const id = `s${createHash('sha1').update(text).digest('hex').slice(0, 12)}`;
      if (seen.has(id)) continue;
      seen.add(id);
      passages.push({ id, title: `${document.title} (${++part})`, text, source: document.source });
      if (passages.length >= count) break outer;
    }
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, passages.map((p) => JSON.stringify(p)).join('\n') + '\n');
  return passages;
}
