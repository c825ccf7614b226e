// npm run bench:graph-quality [-- FILE_OR_DIR ...] — what the local extractor makes of technical
// documentation. Every markdown file is parsed as ingestion parses it, split as chunking splits
// it (markdown mode, 512 tokens) and extracted by the local extractor; the script prints how
// many entity names are code, markup or discourse words, how many relationships carry no verb
// ("related to"), the entity types and the most mentioned names.
//
// Default corpus: the NestJS documentation extracts of datasets/nestjs-docs/source and the
// READMEs of a fixed list of npm packages installed by `npm ci` (real technical docs, with code
// blocks, tables and HTML), so anyone can rerun it without a network. Nothing is written.
//
// The junk rules here are the measure and are kept independent of the extractor's own filter:
// they look at the finished name only.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { splitText } from '@trellis/models';
import { LocalExtractor } from '../services/extraction/src/local/local-extractor';
import { parseDocument } from '@trellis/ingestion';
import { loadAverage, runBench } from './bench-kit.mjs';

const root = resolve(__dirname, '..');
const READMES = [
  '@grpc/grpc-js', '@nestjs/core', '@nestjs/common', '@nestjs/microservices', '@opentelemetry/api', 'better-sqlite3',
  'commander', 'compromise', 'dayjs', 'debug', 'dotenv', 'ejs', 'graphology-communities-louvain', 'kafkajs', 'mammoth',
  'mysql2', 'openai', 'pino', 'prom-client', 'protobufjs', 'raw-body', 'semver', 'typeorm', 'vitest', 'yaml', 'zod',
];

/** Admonition labels and function words: a name made of one of these alone says nothing. */
const DISCOURSE = new Set(
  ('hint note notice warning tip info caution important example examples see also this that these those it its if ' +
    'when then however but and or so for the a an in on at by with as to of from you your we our they there here ' +
    'what which who how why where once now next first finally also otherwise instead yes no true false default ' +
    'usage installation install options option api readme license todo').split(' '),
);

function markdownFiles(path: string): string[] {
  if (!existsSync(path)) return [];
  if (statSync(path).isFile()) return /\.(md|mdx|markdown)$/i.test(path) ? [path] : [];
  return readdirSync(path).sort().flatMap((name) => markdownFiles(join(path, name)));
}

function defaultCorpus(): string[] {
  const nest = markdownFiles(join(root, 'datasets/nestjs-docs/source'));
  const readmes = READMES.flatMap((pkg) => {
    const dir = join(root, 'node_modules', pkg);
    const name = existsSync(dir) ? readdirSync(dir).find((f) => /^readme\.md$/i.test(f)) : undefined;
    return name ? [join(dir, name)] : [];
  });
  return [...nest, ...readmes];
}

type Junk = 'code' | 'markup' | 'discourse';

/** One symbol (`ThrottlerModule`, `@Get`, `app.listen`, `@nestjs/common`), nothing around it. */
const SYMBOL = /^@?[A-Za-z_$][\w$]*(?:[./-][A-Za-z_$][\w$-]*)*$/;

/**
 * Why a name is not an entity a reader would look up, or null when it is one. Code is junk
 * unless it is one clean symbol deliberately typed `code`: markdown syntax, brackets,
 * operators and calls inside a name, or a code-shaped name typed as something else.
 */
function junkKind(name: string, type: string): Junk | null {
  if (/[`*]|\*\*|&[a-z]+;|<\/?[a-z]/i.test(name)) return 'markup';
  if (/[<>{}[\]=;|\\]/.test(name) || /[\w$]\(/.test(name)) return 'code';
  const codeShaped = /^[@$#_~-]|[@$]\w|\b[a-z]+[A-Z]\w*|\w_\w|\b[a-z_$][\w$]*\.[a-z_$]\w{2,}/.test(name) && !/\.(js|io|net|org|com)$/i.test(name);
  if (codeShaped && !(type === 'code' && SYMBOL.test(name))) return 'code';
  const words = name.toLowerCase().split(/\s+/);
  if (words.every((w) => DISCOURSE.has(w))) return 'discourse';
  return null;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const files = args.length > 0 ? args.flatMap((a) => markdownFiles(resolve(a))) : defaultCorpus();
  if (files.length === 0) throw new Error('no markdown files found');
  const extractor = new LocalExtractor();
  const mentions = new Map<string, { name: string; type: string; count: number }>();
  const labels = new Map<string, number>();
  let chunks = 0;
  let relationships = 0;
  const started = performance.now();
  for (const file of files) {
    const parsed = await parseDocument(readFileSync(file), basename(file), 'text/markdown');
    for (const chunk of splitText(parsed.text, { chunkSize: 512, overlap: 32, mode: 'markdown' })) {
      chunks++;
      const result = await extractor.extract(chunk.text);
      for (const e of result.entities) {
        const key = e.name.toLowerCase();
        const seen = mentions.get(key) ?? { name: e.name, type: e.type, count: 0 };
        seen.count++;
        mentions.set(key, seen);
      }
      for (const r of result.relationships) {
        relationships++;
        labels.set(r.label, (labels.get(r.label) ?? 0) + 1);
      }
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const entities = [...mentions.values()];
  const junk = { code: 0, markup: 0, discourse: 0 };
  const junkExamples: string[] = [];
  for (const e of entities) {
    const kind = junkKind(e.name, e.type);
    if (kind === null) continue;
    junk[kind]++;
    if (junkExamples.length < 15 && e.count > 1) junkExamples.push(e.name);
  }
  const types = new Map<string, number>();
  for (const e of entities) types.set(e.type, (types.get(e.type) ?? 0) + 1);
  const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)} %`;
  const junkTotal = junk.code + junk.markup + junk.discourse;
  console.log(`files ${files.length}, chunks ${chunks}, ${seconds.toFixed(1)} s, load ${loadAverage()} (${cpus().length} cores)`);
  console.log(`entities ${entities.length}: junk ${pct(junkTotal, entities.length)} (code ${junk.code}, markup ${junk.markup}, discourse ${junk.discourse})`);
  console.log(`relationships ${relationships}: "related to" ${pct(labels.get('related to') ?? 0, relationships)}, distinct labels ${labels.size}`);
  console.log(`types: ${[...types].sort((a, b) => b[1] - a[1]).map(([t, n]) => `${t} ${pct(n, entities.length)}`).join(', ')}`);
  console.log(`top entities: ${entities.sort((a, b) => b.count - a.count).slice(0, 20).map((e) => `${e.name} (${e.count})`).join(', ')}`);
  console.log(`junk seen more than once: ${junkExamples.join(', ')}`);
}

runBench(main);
