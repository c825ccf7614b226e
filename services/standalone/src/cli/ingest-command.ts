import { readFile } from 'node:fs/promises';
import { SingleBar } from 'cli-progress';
import type { v1 } from '@trellis/contracts';
import type { TrellisClient } from '@trellis/client';
import { expandPaths } from './files';
import type { InputFile } from './files';
import { inOrder, settle } from './in-order';
import type { Outcome } from './in-order';
import { describeError, statusName } from './output';

const POLL_MS = 250;
/** Documents one GetIndexingProgress call may name (the server's MAX_REQUEST_IDS; not imported, to keep the CLI's start-up light). */
const PROGRESS_IDS_PER_CALL = 1000;
/**
 * Files uploaded at the same time: the server parses, stores and announces one while the next
 * is on the wire, and indexing keeps pace (one at a time, the client was the bottleneck).
 */
const UPLOADS_AT_ONCE = 4;

export interface IngestOptions {
  wait: boolean;
  timeoutSeconds: number;
  /** A sitemap or crawl to add besides the paths. */
  site?: SiteIngest;
}

export type SiteIngest = Omit<v1.AddSiteRequest, 'knowledgeBase' | 'metadata'>;

const PAGE_MARK: Record<string, string> = { added: '+', updated: '+', unchanged: '=', not_modified: '=', disallowed: '-', failed: '✗' };

/** Uploads files and URLs, one status line each, then follows indexing to the end. */
export async function ingestCommand(client: TrellisClient, kb: string, inputs: string[], options: IngestOptions, out: NodeJS.WriteStream): Promise<number> {
  await client.getKnowledgeBase(kb);
  const urls = inputs.filter((i) => /^https?:\/\//i.test(i));
  const { files, skipped } = await expandPaths(inputs.filter((i) => !urls.includes(i)));
  const tally = new UploadTally(out);
  await uploadFiles(client, kb, files, tally);
  for (const url of urls) tally.report(url, await settle(client.addDocumentFromUrl({ knowledgeBase: kb, url })));
  const { accepted } = tally;
  let { failures } = tally;
  if (options.site) {
    const site = await addSite(client, kb, options.site, out);
    accepted.push(...site.accepted);
    failures += site.failures;
  }
  if (skipped.length > 0) {
    out.write(`  skipped ${skipped.length} file(s) of unsupported type:\n`);
    for (const name of skipped) out.write(`  - ${name}\n`);
  }
  if (!options.wait || accepted.length === 0) return failures > 0 ? 1 : 0;
  failures += await waitForIndexing(client, kb, accepted, options.timeoutSeconds, out);
  return failures > 0 ? 1 : 0;
}

/** The upload outcomes of one command: a status line each, the new versions to follow, the failures. */
export class UploadTally {
  readonly accepted: v1.Document[] = [];
  failures = 0;

  constructor(private readonly out: NodeJS.WriteStream) {}

  report(name: string, outcome: Outcome): void {
    if (!('document' in outcome)) {
      this.failures++;
      this.out.write(`  ✗ ${name}  ${describeError(outcome.error)}\n`);
      return;
    }
    const { document } = outcome;
    this.out.write(`  ${document.unchanged ? '=' : '+'} ${name}  ${document.unchanged ? 'unchanged' : `version ${document.version}`}\n`);
    if (!document.unchanged) this.accepted.push(document);
  }
}

/** Uploads files a few at a time; their lines come in the order given. */
export async function uploadFiles(client: TrellisClient, kb: string, files: readonly InputFile[], tally: UploadTally): Promise<void> {
  await inOrder(
    files,
    UPLOADS_AT_ONCE,
    async (file) => client.uploadDocument({ knowledgeBase: kb, filename: file.path, sourceUri: file.display }, await readFile(file.path)),
    (file, outcome) => tally.report(file.display, outcome),
  );
}

/** Adds a site page by page, one line per page; the documents to follow and the failures. */
async function addSite(client: TrellisClient, kb: string, site: SiteIngest, out: NodeJS.WriteStream): Promise<{ accepted: v1.Document[]; failures: number }> {
  const accepted: v1.Document[] = [];
  let failures = 0;
  try {
    for await (const page of client.addSite({ knowledgeBase: kb, ...site })) {
      const detail = page.error || (page.outcome === 'added' || page.outcome === 'updated' ? `version ${page.document?.version ?? '?'}` : page.outcome.replace('_', ' '));
      out.write(`  ${PAGE_MARK[page.outcome] ?? '?'} [${page.done}/${page.found}] ${page.url}  ${detail}\n`);
      if ((page.outcome === 'added' || page.outcome === 'updated') && page.document) accepted.push(page.document);
      if (page.outcome === 'failed') failures++;
    }
  } catch (error) {
    failures++;
    out.write(`  ✗ ${site.sitemapUrl || site.crawlUrl}  ${describeError(error)}\n`);
  }
  return { accepted, failures };
}

/**
 * Follows the documents until each is graphed or failed; returns how many failed. Each poll
 * asks GetIndexingProgress for the documents still indexing only, so following a large ingest
 * costs the server little, whatever the size of the knowledge base.
 */
export async function waitForIndexing(client: TrellisClient, kb: string, documents: v1.Document[], timeoutSeconds: number, out: NodeJS.WriteStream): Promise<number> {
  const bar = out.isTTY ? new SingleBar({ format: '  indexing [{bar}] {value}/{total} chunks · {docs} documents done', hideCursor: true }) : null;
  bar?.start(1, 0, { docs: `0/${documents.length}` });
  const pending = new Map(documents.map((d) => [d.id, d]));
  // Chunks of each document as last reported: a finished document's are final and not asked again.
  const chunks = new Map<string, { total: number; graphed: number }>();
  const deadline = Date.now() + timeoutSeconds * 1000;
  let failed = 0;
  let deleted = 0;
  const finalLines: string[] = [];
  while (pending.size > 0 && Date.now() < deadline) {
    const asked = [...pending.values()];
    const progress: v1.DocumentProgress[] = [];
    for (let start = 0; start < asked.length; start += PROGRESS_IDS_PER_CALL) {
      progress.push(...(await client.getIndexingProgress(kb, asked.slice(start, start + PROGRESS_IDS_PER_CALL).map((d) => d.id))).documents);
    }
    const reported = new Set(progress.map((d) => d.id));
    for (const d of asked) {
      if (reported.has(d.id)) continue;
      pending.delete(d.id);
      deleted++;
      finalLines.push(`  - ${d.sourceUri}  deleted before it was indexed`);
    }
    for (const d of progress) {
      const counts = { total: 0, graphed: 0 };
      for (const c of d.chunkCounts) {
        counts.total += c.count;
        if (statusName(c.status) === 'graphed') counts.graphed += c.count;
      }
      chunks.set(d.id, counts);
      const state = statusName(d.status);
      if (state === 'graphed' || state === 'failed') {
        pending.delete(d.id);
        if (state === 'failed') {
          failed++;
          finalLines.push(`  ✗ ${d.sourceUri}  ${d.error}`);
        }
      }
    }
    const sum = (key: 'total' | 'graphed') => [...chunks.values()].reduce((n, c) => n + c[key], 0);
    bar?.setTotal(Math.max(sum('total'), 1));
    bar?.update(sum('graphed'), { docs: `${documents.length - pending.size}/${documents.length}` });
    // Waiting on a spent budget would wait for the next day or a raise: say so and stop.
    const paused = progress.filter((d) => pending.has(d.id) && d.statusDetail.startsWith('paused: budget'));
    if (pending.size > 0 && paused.length === pending.size) {
      bar?.stop();
      for (const line of finalLines) out.write(`${line}\n`);
      out.write(`  ${paused.length} document(s) wait for the knowledge base's LLM budget: ${paused[0]!.statusDetail}\n`);
      out.write(`  raise it with \`trellis kb update ${kb} --daily-tokens N\` (or --daily-usd, --monthly-*); follow with \`trellis status ${kb}\`\n`);
      return failed;
    }
    if (pending.size > 0) await new Promise((r) => setTimeout(r, POLL_MS));
  }
  bar?.stop();
  for (const line of finalLines) out.write(`${line}\n`);
  if (pending.size > 0) {
    out.write(`  still indexing after ${timeoutSeconds}s: ${pending.size} document(s); follow with \`trellis status ${kb}\`\n`);
    return 0;
  }
  out.write(`  indexed ${documents.length - failed - deleted} document(s)${failed > 0 ? `, ${failed} failed` : ''}\n`);
  return failed;
}
