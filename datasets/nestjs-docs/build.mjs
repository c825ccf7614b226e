#!/usr/bin/env node
// Builds corpus.jsonl (one passage per documentation page) and questions.jsonl (gold passage
// ids resolved from page paths) from markdown pages of the NestJS documentation
// (github.com/nestjs/docs.nestjs.com, `content/`). Plain Node, no dependencies.
//
//   node datasets/nestjs-docs/build.mjs [--source <dir>] [--check]
//
// --source: a directory holding the `content/...md` files listed in manifest.tsv (default:
//           datasets/nestjs-docs/source, the prose extracts committed with this dataset; a
//           checkout of docs.nestjs.com works too).
// --check:  rebuild in memory and fail if the committed jsonl files differ.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
/** Passages keep a page's prose up to this many words, ending at a block boundary. */
export const WORD_CAP = 400;
/** Section names prefixed to page titles, so that e.g. the WebSockets and microservices "Guards" pages differ. */
const SECTIONS = {
  fundamentals: 'Fundamentals',
  techniques: 'Techniques',
  security: 'Security',
  graphql: 'GraphQL',
  websockets: 'WebSockets',
  microservices: 'Microservices',
  faq: 'FAQ',
  cli: 'CLI',
  openapi: 'OpenAPI',
  recipes: 'Recipes',
  devtools: 'Devtools',
};

/** Markdown of one page to its title and prose blocks (code, HTML markup, images and link targets dropped). */
export function pageBlocks(markdown) {
  const lines = [];
  let fenced = false;
  for (const raw of markdown.replace(/\r\n/g, '\n').split('\n')) {
    const unquoted = raw.replace(/^\s*>\s?/, '');
    if (/^\s*(```|~~~)/.test(unquoted)) {
      fenced = !fenced;
      continue;
    }
    if (fenced || /^\s*@@(filename|switch)/.test(raw)) continue;
    lines.push(raw);
  }
  const text = lines
    .join('\n')
    .replace(/<(figure|iframe|pre)\b[\s\S]*?<\/\1>/gi, '')
    .replace(/<div class="file-tree">[\s\S]*?\n<\/div>/g, '')
    .replace(/<app-banner-[^>]*><\/app-banner-[^>]*>/g, '')
    .replace(/<\/t[dh]>\s*<t[dh][^>]*>/gi, ' | ')
    .replace(/<tr[^>]*>\s*<t[dh][^>]*>/gi, '\n| ')
    .replace(/<\/t[dh]>\s*<\/tr>/gi, ' |\n')
    .replace(/<br\s*\/?>/gi, ' ')
    .replace(/<\/?(?:table|tbody|thead|tr|td|th|div|span|code|strong|em|a|p|sup|ul|ol|li|blockquote|img)\b[^>]*>/gi, '')
    .replace(/\{\{\s*'([{}])'\s*\}\}/g, '$1')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/&nbsp;/g, ' ');
  const blocks = [];
  let current = [];
  const flush = () => {
    if (current.length) blocks.push(current.join(' ').replace(/\s+/g, ' ').trim());
    current = [];
  };
  for (const line of text.split('\n')) {
    const content = line.replace(/^\s*>\s?/, '').trim();
    if (content === '' || /^\|?[\s|:-]+\|?$/.test(content)) {
      if (content === '') flush();
      continue;
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(content);
    if (heading) {
      flush();
      blocks.push(`# ${cleanInline(heading[1])}`);
      continue;
    }
    if (/^(\d+\.|[-*])\s/.test(content) || content.startsWith('|')) flush();
    current.push(cleanInline(callout(content)));
  }
  flush();
  const nonEmpty = blocks.filter((b) => b.replace(/^# /, '').trim() !== '');
  const first = nonEmpty.findIndex((b) => b.startsWith('# '));
  if (first < 0) throw new Error('page has no heading');
  return { title: nonEmpty[first].slice(2), blocks: nonEmpty.slice(first + 1) };
}

/** "info **Hint** text" → "Hint: text". */
function callout(line) {
  return line.replace(/^(info|warning|warn|error|Warning)?\s*\*\*(Hint|Warning|Notice|Note|Info|info|hint|warning|Important)\*\*\s*/, (_, _kind, label) => `${label[0].toUpperCase()}${label.slice(1).toLowerCase()}: `);
}

function cleanInline(text) {
  return text
    .replace(/\*\*|__|~~|`/g, '')
    .replace(/(^|[\s(])_([^_]+)_(?=[\s).,:;]|$)/g, '$1$2')
    .replace(/(^|[\s(])\*([^*]+)\*(?=[\s).,:;]|$)/g, '$1$2')
    .replace(/\\([*_|[\]])/g, '$1');
}

const words = (text) => text.split(/\s+/).filter(Boolean).length;

/** The passage of one page: its prose blocks, kept whole, up to WORD_CAP words; trailing headings dropped. */
export function pagePassage(path, markdown) {
  const { title: heading, blocks } = pageBlocks(markdown);
  const folder = path.split('/').slice(-2, -1)[0];
  const title = SECTIONS[folder] ? `${SECTIONS[folder]}: ${heading}` : heading;
  const kept = [];
  let count = 0;
  for (const block of blocks) {
    const n = words(block);
    if (kept.length > 0 && count + n > WORD_CAP) break;
    kept.push(block);
    count += n;
  }
  while (kept.length > 1 && kept[kept.length - 1].startsWith('# ')) kept.pop();
  const text = kept.map((b) => (b.startsWith('# ') ? b.slice(2) : b)).join('\n\n');
  const id = `p${createHash('sha1').update(`${title}\n${text}`).digest('hex').slice(0, 12)}`;
  return { id, title, text };
}

function readManifest() {
  return readFileSync(join(HERE, 'manifest.tsv'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => {
      const [path, commit] = l.split('\t');
      return { path, commit };
    });
}

const jsonl = (rows) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

function build(sourceDir) {
  const byPath = new Map();
  const corpus = [];
  for (const { path } of readManifest()) {
    const passage = pagePassage(path, readFileSync(join(sourceDir, path), 'utf8'));
    if (corpus.some((p) => p.title === passage.title)) throw new Error(`${path}: duplicate title "${passage.title}"`);
    byPath.set(path, passage.id);
    corpus.push(passage);
  }
  const questionsFile = join(HERE, 'questions.source.jsonl');
  if (!existsSync(questionsFile)) return { 'corpus.jsonl': jsonl(corpus) };
  const questions = readFileSync(questionsFile, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((line, i) => {
      const { gold_pages: pages, ...q } = JSON.parse(line);
      const gold = pages.map((p) => {
        const id = byPath.get(p);
        if (!id) throw new Error(`questions.source.jsonl:${i + 1}: ${p} is not in the manifest`);
        return id;
      });
      return { id: q.id, question: q.question, answer: q.answer, gold, type: q.type, level: q.level };
    });
  return { 'corpus.jsonl': jsonl(corpus), 'questions.jsonl': jsonl(questions) };
}

function main(argv) {
  const at = argv.indexOf('--source');
  const sourceDir = at >= 0 ? argv[at + 1] : join(HERE, 'source');
  const files = build(sourceDir);
  if (argv.includes('--check')) {
    const stale = Object.keys(files).filter((f) => readFileSync(join(HERE, f), 'utf8') !== files[f]);
    if (stale.length) {
      console.error(`out of date: ${stale.join(', ')} (run node datasets/nestjs-docs/build.mjs)`);
      process.exit(1);
    }
    console.log(`${Object.keys(files).join(' and ')} up to date`);
    return;
  }
  for (const [name, content] of Object.entries(files)) writeFileSync(join(HERE, name), content);
  const lines = (name) => (files[name] ?? '').split('\n').length - 1;
  console.log(`${lines('corpus.jsonl')} passages, ${Math.max(0, lines('questions.jsonl'))} questions`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
