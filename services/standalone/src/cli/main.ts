import 'reflect-metadata';
import { Command, Option } from 'commander';
import type { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { connect } from './connection';
import type { ConnectionOptions } from './connection';
import { addAdminCommands } from './admin-commands';
import { addGraphEditCommands } from './graph-commands';
import { addCommunityCommands } from './community-commands';
import { addChatCommands } from './chat-commands';
import { addMcpCommand } from './mcp-command';
import { ingestCommand, waitForIndexing } from './ingest-command';
import { estimateCommand } from './estimate-command';
import { addBudgetOptions, budgetSettings, budgetSummary, hasBudgetFlags } from './budget-options';
import type { BudgetFlags } from './budget-options';
import type { SiteIngest } from './ingest-command';
import { removeDocuments } from './document-commands';
import { SERVER_DEFAULT_MODE, evalCommand, integerList, stringList } from './eval-command';
import { chunkSummary, describeError, stageSummary, statusName, table } from './output';
import { addExtractionOptions, extractionSettings, hasExtractionFlags, usageSummary } from './extraction-options';
import type { ExtractionFlags } from './extraction-options';
import { integer } from './parsers';
import { addResolutionOptions, hasResolutionFlags, resolutionSettings } from './resolution-options';
import type { ResolutionFlags } from './resolution-options';

const out = process.stdout;

interface IngestFlags {
  sitemap?: string;
  crawl?: string;
  maxPages?: number;
  sameOrigin?: boolean;
  anyOrigin?: boolean;
  delayMs?: number;
  concurrency?: number;
  wait: boolean;
  timeout: number;
  estimate?: boolean;
  sample?: number;
}

function siteOption(opts: IngestFlags): SiteIngest | undefined {
  if (opts.sitemap !== undefined && opts.crawl !== undefined) throw new Error('give --sitemap or --crawl, not both');
  if (opts.sitemap === undefined && opts.crawl === undefined) return undefined;
  return {
    sitemapUrl: opts.sitemap ?? '',
    crawlUrl: opts.crawl ?? '',
    maxPages: opts.maxPages ?? 0,
    followOtherOrigins: opts.anyOrigin === true,
    ...(opts.delayMs === undefined ? {} : { delayMs: opts.delayMs }),
    concurrency: opts.concurrency ?? 0,
  };
}

interface KbCreateOptions extends ExtractionFlags, ResolutionFlags, BudgetFlags {
  description: string;
  chunkSize?: number;
  chunkOverlap?: number;
  splitter?: string;
}

/** Runs one command with a connection, turning errors into a message and exit code 1. */
function run(action: (client: TrellisClient, ...args: never[]) => Promise<number | void>) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args[args.length - 1] as Command;
    const options = command.optsWithGlobals<ConnectionOptions>();
    let connection;
    try {
      connection = await connect(options);
      process.exitCode = (await action(connection.client, ...(args.slice(0, -1) as never[]))) ?? 0;
    } catch (error) {
      process.stderr.write(`error: ${describeError(error)}\n`);
      process.exitCode = 1;
    } finally {
      await connection?.close();
    }
  };
}

const program = new Command('trellis')
  .description('Trellis: a Graph RAG knowledge base. Talks to a running server over gRPC, or runs one in-process with --embedded.')
  .option('--server <host:port>', 'server address (env TRELLIS_SERVER)', undefined)
  .option('--embedded', 'run an in-process server instead of connecting to one')
  .option('--data-dir <dir>', 'data directory for --embedded (env TRELLIS_DATA_DIR, default ./.trellis)')
  .option('--api-key <key>', 'API key (env TRELLIS_API_KEY)')
  .option('--actor <name>', 'who graph edits are logged as (env TRELLIS_ACTOR, default: the login name)')
  .showHelpAfterError();

const kb = program.command('kb').description('manage knowledge bases');
addBudgetOptions(addResolutionOptions(
  addExtractionOptions(
    kb
      .command('create <name>')
      .option('--description <text>', 'what the knowledge base holds', '')
      .option('--chunk-size <tokens>', 'chunk size in tokens (default 512)', integer(32, 8192))
      .option('--chunk-overlap <tokens>', 'overlap between chunks in tokens (default 64)', integer(1, 4096))
      .addOption(new Option('--splitter <kind>', 'splitting strategy (default: markdown for .md, sentence otherwise)').choices(['sentence', 'markdown'])),
  ),
)).action(
  run(async (client, name: string, opts: KbCreateOptions) => {
    const created = await client.createKnowledgeBase({
      name,
      description: opts.description,
      chunking: { chunkSizeTokens: opts.chunkSize ?? 0, chunkOverlapTokens: opts.chunkOverlap ?? 0, splitter: opts.splitter ?? '' },
      models: { embeddingModel: '', embeddingDimensions: 0, llmModel: opts.llmModel ?? '', extractionPromptVersion: '' },
      extraction: hasExtractionFlags(opts) ? extractionSettings(opts) : undefined,
      resolution: resolutionSettings(opts),
      llmBudget: hasBudgetFlags(opts) ? budgetSettings(opts) : undefined,
    });
    out.write(`created knowledge base ${created.name} (${created.id})\n`);
  }),
);
addBudgetOptions(addResolutionOptions(
  addExtractionOptions(
    kb
      .command('update <name>')
      .description("change a knowledge base's description, LLM model, extraction prompt, entity resolution or LLM budget")
      .option('--description <text>', 'what the knowledge base holds'),
  ),
)).action(
  run(async (client, name: string, opts: ExtractionFlags & ResolutionFlags & BudgetFlags & { description?: string }) => {
    const current = await client.getKnowledgeBase(name);
    const updated = await client.updateKnowledgeBase({
      knowledgeBase: name,
      description: opts.description,
      llmModel: opts.llmModel,
      extraction: hasExtractionFlags(opts) ? extractionSettings(opts, current.extraction) : undefined,
      resolution: hasResolutionFlags(opts) ? resolutionSettings(opts, current.resolution) : undefined,
      llmBudget: hasBudgetFlags(opts) ? budgetSettings(opts, current.budget?.budget) : undefined,
    });
    const e = updated.extraction;
    const r = updated.resolution;
    out.write(
      `updated knowledge base ${updated.name}: llm model ${updated.models?.llmModel || '(server default)'}, entity types ${e?.entityTypes.join(',') || '(any)'}, gleaning ${e?.gleaningPasses ?? 0}, output ${e?.outputMode || 'auto'}, resolution ${r?.mode || '(server default)'}\n`,
    );
    if (updated.budget) out.write(`LLM budget: ${budgetSummary(updated.budget)}\n`);
  }),
);
kb.command('list').action(
  run(async (client) => {
    const { knowledgeBases } = await client.listKnowledgeBases();
    if (knowledgeBases.length === 0) return void out.write('no knowledge bases yet: create one with `trellis kb create NAME`\n');
    out.write(`${table([['NAME', 'DOCUMENTS', 'CHUNK SIZE', 'ID'], ...knowledgeBases.map((k) => [k.name, String(k.documentCount), String(k.chunking?.chunkSizeTokens ?? ''), k.id])])}\n`);
  }),
);
kb.command('delete <name>').action(
  run(async (client, name: string) => {
    await client.deleteKnowledgeBase(name);
    out.write(`deleted knowledge base ${name}\n`);
  }),
);

program
  .command('ingest <kb> [paths...]')
  .description('add files, directories (recursively), http(s) URLs and web sites (--sitemap, --crawl), then follow their indexing')
  .option('--sitemap <url>', 'add every page a sitemap lists (sitemap indexes followed)')
  .option('--crawl <url>', 'add the pages reached by following links from this page')
  .option('--max-pages <n>', 'pages of a sitemap or crawl fetched at most (default 100)', integer(1, 10_000))
  .option('--same-origin', "crawl: follow links to the start page's origin only (the default)")
  .option('--any-origin', 'crawl: follow links to other origins too')
  .option('--delay-ms <ms>', 'least time between two requests to one site (default 500; robots.txt may ask for more)', integer(0, 60_000))
  .option('--concurrency <n>', 'pages fetched and indexed at the same time (default 2)', integer(1, 8))
  .option('--no-wait', 'return once uploaded, without waiting for indexing')
  .option('--timeout <seconds>', 'how long to wait for indexing', integer(1, 86_400), 1800)
  .option('--estimate', 'only count the chunks and tokens ingesting the files would take and price them; nothing is uploaded')
  .option('--sample <files>', '--estimate: first ingest this many of the files (spread over the list) for real, so the estimate uses what the model returned for them', integer(1, 10_000))
  .action(
    run((client, kbName: string, paths: string[], opts: IngestFlags) => {
      if (opts.sameOrigin && opts.anyOrigin) throw new Error('give --same-origin or --any-origin, not both');
      if (opts.sample !== undefined && !opts.estimate) throw new Error('--sample goes with --estimate: without it every file is ingested anyway');
      if (opts.estimate) {
        if (opts.sitemap !== undefined || opts.crawl !== undefined) throw new Error('--estimate takes files and directories, not --sitemap or --crawl');
        if (paths.length === 0) throw new Error('give the files or directories to estimate');
        return estimateCommand(client, kbName, paths, { sampleFiles: opts.sample ?? 0, timeoutSeconds: opts.timeout }, out);
      }
      const site = siteOption(opts);
      if (paths.length === 0 && site === undefined) throw new Error('give files, URLs, --sitemap or --crawl');
      return ingestCommand(client, kbName, paths, { wait: opts.wait, timeoutSeconds: opts.timeout, site }, out);
    }),
  );

program
  .command('rm <kb> [documents...]')
  .alias('delete')
  .description('delete documents by id or source URI, and with --failed every document whose indexing failed')
  .option('--failed', 'also delete every failed document')
  .action(run((client, kbName: string, documents: string[], opts: { failed?: boolean }) => removeDocuments(client, kbName, documents, { failed: opts.failed === true }, out)));

program
  .command('reindex <kb> [document]')
  .description("index one document (id) or every document again with the knowledge base's current settings; unchanged chunks reuse their cached extraction")
  .option('--no-wait', 'return once started, without waiting for indexing')
  .option('--timeout <seconds>', 'how long to wait for indexing', integer(1, 86_400), 1800)
  .action(
    run(async (client, kbName: string, documentId: string | undefined, opts: { wait: boolean; timeout: number }) => {
      const documents = documentId ? [await client.reindexDocument(kbName, documentId)] : (await client.reindexKnowledgeBase(kbName)).documents;
      for (const d of documents) out.write(`  ↻ ${d.sourceUri}  version ${d.version}\n`);
      if (!opts.wait || documents.length === 0) return 0;
      return (await waitForIndexing(client, kbName, documents, opts.timeout, out)) > 0 ? 1 : 0;
    }),
  );

/** Which model made the knowledge base's vectors, which one the server has, and what to do when they differ. */
function embeddingSummary(kb: v1.KnowledgeBase): string {
  const server = kb.serverEmbedding;
  const recorded = kb.models?.embeddingModel ?? '';
  const lines = [`embeddings: ${recorded || '(not recorded)'}; server: ${server?.model ?? 'unknown'}`];
  if (server?.fallback) lines.push(`warning: ${server.fallback}`);
  if (recorded !== '' && server && recorded !== server.model) {
    lines.push(`warning: this knowledge base's vectors are of another model; new documents are refused and queries use full text. Run \`trellis reindex ${kb.name}\``);
  }
  return lines.join('\n');
}

program
  .command('status <kb>')
  .description('index status of every document')
  .action(
    run(async (client, kbName: string) => {
      const documents = (await client.listAllDocuments(kbName)).sort((a, b) => (a.sourceUri < b.sourceUri ? -1 : a.sourceUri > b.sourceUri ? 1 : 0));
      if (documents.length === 0) out.write('no documents yet\n');
      else {
        out.write(
          `${table([
            ['DOCUMENT', 'STATUS', 'STAGE', 'VERSION', 'CHUNKS', 'STAGE TIMES', 'LLM USAGE', 'DETAIL'],
            ...documents.map((d) => [d.sourceUri, statusName(d.status), d.currentStage, String(d.version), chunkSummary(d), stageSummary(d), usageSummary(d.llmUsage), d.error || d.statusDetail]),
          ])}\n`,
        );
      }
      const knowledgeBase = await client.getKnowledgeBase(kbName);
      if (documents.length > 0) out.write(`knowledge base LLM usage: ${usageSummary(knowledgeBase.llmUsage)}\n`);
      if (knowledgeBase.budget) out.write(`LLM budget: ${budgetSummary(knowledgeBase.budget)}\n`);
      out.write(`${embeddingSummary(knowledgeBase)}\n`);
      return documents.some((d) => statusName(d.status) === 'failed') ? 1 : 0;
    }),
  );

program
  .command('ask <kb> [question]')
  .description('answer a question with citations, streamed (with --chat or --engine the kb may be left out: `ask <question>`)')
  .option('--top-k <n>', 'sources to retrieve (default: the engine\'s, else 5)', integer(1, 50))
  .option('--chat <id>', 'continue a saved conversation (the id a previous answer printed)')
  .option('--engine <name>', 'run this chat engine')
  .action(
    run(async (client, first: string, second: string | undefined, opts: { topK?: number; chat?: string; engine?: string }) => {
      const [kbName, question] = second === undefined ? ['', first] : [first, second];
      const request = { knowledgeBase: kbName, question, topK: opts.topK ?? 0, chatId: opts.chat ?? '', engine: opts.engine ?? '' };
      for await (const event of client.chat(request)) {
        if (event.token) out.write(event.token);
        if (event.done) {
          out.write('\n');
          if (event.done.condensedQuestion && event.done.condensedQuestion !== question) out.write(`\n(asked as: ${event.done.condensedQuestion})\n`);
          if (event.done.graphContext) out.write(`\nGraph context:\n${event.done.graphContext}\n`);
          if (event.done.citations.length > 0) out.write('\nSources:\n');
          for (const c of event.done.citations) out.write(`  [${c.index}] ${c.sourceUri}\n`);
          out.write(`\nchat: ${event.done.chatId} (continue with --chat ${event.done.chatId})\n`);
        }
      }
    }),
  );

program
  .command('retrieve <kb> <question>')
  .description('the chunks that best answer a question')
  .addOption(new Option('--mode <mode>', 'retrieval mode').choices(['vector', 'fulltext', 'graph', 'hybrid']).default('hybrid'))
  .option('--top-k <n>', 'chunks to return', integer(1, 1000), 5)
  .option('--json', 'print JSON')
  .action(
    run(async (client, kbName: string, question: string, opts: { mode: string; topK: number; json?: boolean }) => {
      const { chunks } = await client.retrieveChunks({ knowledgeBase: kbName, query: question, mode: opts.mode, topK: opts.topK });
      if (opts.json) return void out.write(`${JSON.stringify(chunks, null, 2)}\n`);
      chunks.forEach((c, i) => {
        const signals = c.signals.map((s) => `${s.source}#${s.rank}`).join(' ');
        out.write(`${i + 1}. ${c.sourceUri} (chunk ${c.ordinal}) score ${c.score.toFixed(4)} [${signals}]\n   ${c.text.replace(/\s+/g, ' ').slice(0, 200)}\n`);
      });
    }),
  );

program
  .command('eval <corpus> <questions>')
  .description('measure retrieval quality on a gold set: Recall@k, MRR and latency per mode (JSONL files, see docs/benchmarks.md)')
  .option(
    '--mode <modes>',
    `comma-separated retrieval modes; "${SERVER_DEFAULT_MODE}" asks with no mode and no strategy, measuring the server's defaults`,
    stringList(['vector', 'fulltext', 'graph', 'hybrid', SERVER_DEFAULT_MODE]),
    ['vector', 'fulltext', 'graph', 'hybrid'],
  )
  .option('--k <ks>', 'comma-separated cut-offs for Recall@k', integerList(1, 1000), [2, 5, 10])
  .option('--strategy <strategies>', 'comma-separated graph strategies for graph and hybrid modes (weighted, ppr; default: the server default)', stringList(['weighted', 'ppr']), [''])
  .option('--kb <name>', 'an already indexed knowledge base holding the corpus (default: ingest into a fresh one)')
  .option('--json <file>', 'write the summary and per-question results as JSON')
  .option('--timeout <seconds>', 'how long to wait for indexing', integer(1, 86_400), 3600)
  .action(
    run((client, corpus: string, questions: string, opts: { mode: string[]; k: number[]; strategy: string[]; kb?: string; json?: string; timeout: number }) =>
      evalCommand(client, corpus, questions, { modes: opts.mode, ks: opts.k, strategies: opts.strategy, kb: opts.kb, json: opts.json, timeoutSeconds: opts.timeout }, out),
    ),
  );

const graph = program
  .command('graph <kb>')
  .description("an entity with its relationships, or the size of the KB's graph; subcommands edit the graph")
  .option('--entity <name>', 'entity name or id')
  .option('--json', 'print JSON (with no --entity: the whole graph)')
  .action(
    run(async (client, kbName: string, opts: { entity?: string; json?: boolean }) => {
      if (!opts.entity) {
        const graph = await client.exportGraph(kbName);
        if (opts.json) return void out.write(`${JSON.stringify(graph, null, 2)}\n`);
        return void out.write(`${graph.entities.length} entities, ${graph.relationships.length} relationships\n`);
      }
      const detail = await client.getEntity(kbName, opts.entity);
      if (opts.json) return void out.write(`${JSON.stringify(detail, null, 2)}\n`);
      const e = detail.entity!;
      out.write(`${e.name} (${e.type}, ${e.mentionCount} mentions)\n  ${e.description}\n\nRelationships:\n`);
      for (const r of detail.relationships) out.write(`  ${r.sourceName} -[${r.label}]-> ${r.targetName}  (${r.id}, weight ${r.weight})\n`);
    }),
  );
addGraphEditCommands(graph, run);
addMcpCommand(program, run);
addCommunityCommands(program, run);
addChatCommands(program, run);

addAdminCommands(program, (action) => async (...args: unknown[]) => {
  try {
    process.exitCode = (await action(...args)) ?? 0;
  } catch (error) {
    process.stderr.write(`error: ${describeError(error)}\n`);
    process.exitCode = 1;
  }
});

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`error: ${describeError(error)}\n`);
  process.exitCode = 1;
});
