import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { credentials, loadPackageDefinition } from '@grpc/grpc-js';
import type { Client, ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStandaloneProcess, waitFor } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { TrellisClient } from '@trellis/client';
import { trellis, uploadExamples } from './helpers';

const ROOT = resolve(__dirname, '../../..');

describe('the trellis CLI', () => {
  describe('--embedded, on its own data directory', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'trellis-cli-'));
    const embedded = (...args: string[]) => trellis(['--embedded', '--data-dir', dataDir, ...args]);

    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

    it('ingests MDX as the markdown it holds, names every file it skips, and deletes failed or named documents', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'trellis-mdx-'));
      writeFileSync(join(dir, 'deploy.mdx'), "import { Callout } from 'nextra/components'\n\n# Deploy\n\n<Callout>Set the internal token before installing the chart.</Callout>\n");
      writeFileSync(join(dir, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      writeFileSync(join(dir, 'notes.xyz'), 'not a known type');
      expect((await embedded('kb', 'create', 'site')).code).toBe(0);
      const ingest = await embedded('ingest', 'site', dir);
      expect(ingest.code).toBe(0);
      expect(ingest.stdout).toMatch(/\+ \S*deploy\.mdx {2}version 1/);
      expect(ingest.stdout).toContain('skipped 2 file(s) of unsupported type:');
      expect(ingest.stdout).toMatch(/- \S*logo\.png\n/);
      expect(ingest.stdout).toMatch(/- \S*notes\.xyz\n/);
      const [hit] = JSON.parse((await embedded('retrieve', 'site', 'internal token chart', '--mode', 'fulltext', '--json')).stdout) as Array<{ text: string }>;
      expect(hit?.text).toContain('Set the internal token before installing the chart.');
      expect(hit?.text).not.toMatch(/Callout|import/);

      // An MDX file with no text fails; `rm --failed` clears it, `delete` (the same command) by source URI deletes one.
      writeFileSync(join(dir, 'empty.mdx'), "import X from 'x'\n<X />\n");
      expect((await embedded('ingest', 'site', join(dir, 'empty.mdx'))).code).toBe(1);
      expect((await embedded('status', 'site')).stdout).toMatch(/empty\.mdx\s+failed/);
      const removed = await embedded('rm', 'site', '--failed');
      expect(removed.code).toBe(0);
      expect(removed.stdout).toMatch(/- \S*empty\.mdx {2}\(\S+, failed\)\ndeleted 1 document\(s\)/);
      expect((await embedded('rm', 'site', 'no/such/file.md')).code).toBe(1);
      const status = await embedded('status', 'site');
      expect(status.stdout).not.toContain('empty.mdx');
      expect(status.code).toBe(0);
      const sourceUri = /\+ (\S*deploy\.mdx)/.exec(ingest.stdout)![1]!;
      expect((await embedded('delete', 'site', sourceUri)).stdout).toContain('deleted 1 document(s)');
      expect((await embedded('status', 'site')).stdout).toContain('no documents yet');
      rmSync(dir, { recursive: true, force: true });
      // Nine commands, each starting the embedded server (about 4 s of CPU and 6-7 s on a quiet machine).
    }, 180_000);

    it('creates a knowledge base, ingests a directory, and answers with citations', async () => {
      expect((await embedded('kb', 'create', 'docs', '--chunk-size', '256')).stdout).toMatch(/created knowledge base docs/);
      const ingest = await embedded('ingest', 'docs', 'examples');
      expect(ingest.code).toBe(0);
      expect(ingest.stdout).toContain('+ examples/polonium.txt  version 1');
      expect(ingest.stdout).toMatch(/indexed 5 document\(s\)/);

      const status = await embedded('status', 'docs');
      expect(status.stdout.split('\n').filter((l) => l.includes('graphed'))).toHaveLength(5);
      expect(status.stdout).toMatch(/STAGE TIMES/);
      expect(status.stdout).toMatch(/examples\/polonium\.txt\s+graphed\s+done\s+1\s+1 graphed\s+ingestion \d+ ms · chunking \d+(\.\d)? m?s · extraction/);

      const retrieved = JSON.parse((await embedded('retrieve', 'docs', 'Who discovered piezoelectricity?', '--mode', 'fulltext', '--top-k', '2', '--json')).stdout) as Array<{ sourceUri: string }>;
      expect(retrieved[0]?.sourceUri).toBe('examples/pierre-curie.html');

      const ask = await embedded('ask', 'docs', 'Who discovered piezoelectricity?');
      expect(ask.stdout).toMatch(/piezoelectricity.*\[\d\]/);
      expect(ask.stdout).toMatch(/Sources:\n {2}\[\d\] examples\/pierre-curie\.html/);

      const graph = await embedded('graph', 'docs', '--entity', 'Marie Curie');
      expect(graph.stdout).toMatch(/^Marie Curie \(person, \d+ mentions\)/);
      expect((await embedded('kb', 'list')).stdout).toMatch(/docs\s+5\s+256/);
      // Seven CLI runs, each loading the embedding model into its own process.
    }, 180_000);

    it('re-ingesting unchanged files is a no-op, and errors exit non-zero with a clear message', async () => {
      const again = await embedded('ingest', 'docs', 'examples/polonium.txt');
      expect(again.stdout).toContain('= examples/polonium.txt  unchanged');
      const missingKb = await embedded('ingest', 'nope', 'examples');
      expect(missingKb.code).toBe(1);
      expect(missingKb.stderr).toMatch(/knowledge base "nope" not found \(NOT_FOUND\)/);
      const badTopK = await embedded('retrieve', 'docs', 'x', '--top-k', '0');
      expect(badTopK.code).not.toBe(0);
      expect(badTopK.stderr).toMatch(/must be an integer from 1 to 1000/);
    });
  });

  describe('against a running server', () => {
    let server: StandaloneProcess;

    beforeAll(async () => {
      server = await startStandaloneProcess();
    });

    afterAll(async () => {
      await server?.dispose();
    });

    it('talks gRPC to --server and says so when no server answers', async () => {
      expect((await trellis(['--server', server.grpcAddress, 'kb', 'create', 'remote'])).code).toBe(0);
      expect((await trellis(['--server', server.grpcAddress, 'kb', 'list'])).stdout).toContain('remote');
      const unreachable = await trellis(['--server', '127.0.0.1:1', 'kb', 'list']);
      expect(unreachable.code).toBe(1);
      expect(unreachable.stderr).toMatch(/cannot reach the Trellis server/);
    });

    it('reports the indexing progress of the documents asked, and follows an ingest with it', async () => {
      const client = new TrellisClient({ address: server.grpcAddress });
      try {
        await client.createKnowledgeBase({ name: 'followed' });
        await client.createKnowledgeBase({ name: 'elsewhere' });
        const [first, second] = (await uploadExamples(client, 'followed')).slice(0, 2);
        // A file with no text is refused, and recorded as failed with the reason.
        await expect(client.uploadDocument({ knowledgeBase: 'followed', filename: 'empty.mdx', sourceUri: 'empty.mdx' }, Buffer.from("import X from 'x'\n<X />\n"))).rejects.toThrow(/no text/);
        const broken = (await client.listAllDocuments('followed')).find((d) => d.sourceUri === 'empty.mdx')!;
        const [foreign] = await uploadExamples(client, 'elsewhere');
        const asked = [second!.id, 'no-such-document', broken.id, foreign!.id, first!.id];
        const done = await waitFor(
          async () => {
            const { documents } = await client.getIndexingProgress('followed', asked);
            return documents.every((d) => d.status === 'INDEX_STATUS_GRAPHED' || d.status === 'INDEX_STATUS_FAILED') ? documents : undefined;
          },
          60_000,
          'the followed documents to be indexed',
        );
        // In the order asked; an unknown id and another knowledge base's document are left out.
        expect(done.map((d) => d.id)).toEqual([second!.id, broken.id, first!.id]);
        expect(done[1]).toMatchObject({ sourceUri: 'empty.mdx', status: 'INDEX_STATUS_FAILED', error: expect.stringMatching(/text/), chunkCounts: [] });
        for (const d of [done[0]!, done[2]!]) {
          const listed = await client.getDocument('followed', d.id);
          expect(d).toMatchObject({ version: 1, error: '', statusDetail: '', status: 'INDEX_STATUS_GRAPHED' });
          expect(d.chunkCounts).toEqual(listed.chunkCounts);
          expect(d.chunkCounts.every((c) => c.status === 'INDEX_STATUS_GRAPHED' && c.count > 0)).toBe(true);
        }
        // The examples beyond the two asked may still be indexing; once they are done, so is the knowledge base.
        await waitFor(async () => ((await client.isIndexing('followed')) ? undefined : true), 60_000, "the knowledge base's other documents to be indexed");
        expect(await client.isIndexing('followed')).toBe(false);

        // `trellis ingest` follows its uploads with it: one more file, and the bar's summary line.
        const dir = mkdtempSync(join(tmpdir(), 'trellis-follow-'));
        writeFileSync(join(dir, 'more.txt'), 'Pierre Curie taught physics at the Sorbonne in Paris.');
        const cli = await trellis(['--server', server.grpcAddress, 'ingest', 'followed', dir]);
        rmSync(dir, { recursive: true, force: true });
        expect(cli.code).toBe(0);
        expect(cli.stdout).toMatch(/indexed 1 document\(s\)\n/);
      } finally {
        client.close();
      }
    });

    it('edits the graph: merge, log, unmerge, set-weight', async () => {
      const cli = (...args: string[]) => trellis(['--server', server.grpcAddress, '--actor', 'cli-curator', ...args]);
      expect((await cli('kb', 'create', 'edited')).code).toBe(0);
      expect((await cli('ingest', 'edited', 'examples')).stdout).toMatch(/indexed 5 document\(s\)/);
      const merged = await cli('graph', 'merge', 'edited', 'Marie Sklodowska', 'Marie Curie');
      expect(merged.stdout).toMatch(/^merged: (edit_\S+)\s+merge-entities .* by cli-curator/);
      const editId = /^merged: (edit_\S+)/.exec(merged.stdout)![1]!;
      expect((await cli('graph', 'merge', 'edited', 'Marie Sklodowska', 'Marie Curie')).stderr).toMatch(/"Marie Sklodowska" not found in knowledge base "edited" \(NOT_FOUND\)/);
      expect((await cli('graph', 'log', 'edited')).stdout).toMatch(new RegExp(`${editId}\\s+\\S+\\s+cli-curator\\s+merge-entities`));
      expect((await cli('graph', 'unmerge', 'edited', editId)).stdout).toMatch(/^undone: .* \(undone by cli-curator\)/);
      expect((await cli('graph', 'edited', '--entity', 'Marie Sklodowska')).stdout).toMatch(/^Marie Sklodowska \(/);

      const detail = (await cli('graph', 'edited', '--entity', 'Irène Joliot-Curie')).stdout;
      const relationshipId = /-\[directed\]-> Radium Institute {2}\((\S+),/.exec(detail)![1]!;
      expect((await cli('graph', 'set-weight', 'edited', relationshipId, '-1')).stdout).toMatch(/weight -1 \(excluded from retrieval\)/);
      expect((await cli('graph', 'edited', '--entity', 'Irène Joliot-Curie')).stdout).toContain(`(${relationshipId}, weight -1)`);
      const bad = await cli('graph', 'set-weight', 'edited', relationshipId, 'heavy');
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/weight must be a number/);
    });

    it('serves the gRPC health service and server reflection', async () => {
      const healthProto = loadSync(join(ROOT, 'node_modules/grpc-health-check/proto/health/v1/health.proto'), { enums: String });
      const Health = (loadPackageDefinition(healthProto) as unknown as { grpc: { health: { v1: { Health: new (a: string, c: unknown) => Client & { check(request: { service: string }, callback: (error: ServiceError | null, response: { status: string }) => void): void } } } } }).grpc.health.v1.Health;
      const health = new Health(server.grpcAddress, credentials.createInsecure());
      const status = await new Promise<string>((ok, fail) =>
        health.check({ service: '' }, (error: ServiceError | null, response: { status: string }) => (error ? fail(error) : ok(response.status))),
      );
      health.close();
      expect(status).toBe('SERVING');

      const reflectionProto = loadSync(join(ROOT, 'node_modules/@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto'));
      type ReflectionClient = Client & { serverReflectionInfo(): NodeJS.ReadWriteStream & { write(m: unknown): void; end(): void } };
      const Reflection = (loadPackageDefinition(reflectionProto) as unknown as { grpc: { reflection: { v1: { ServerReflection: new (a: string, c: unknown) => ReflectionClient } } } }).grpc.reflection.v1.ServerReflection;
      const reflection = new Reflection(server.grpcAddress, credentials.createInsecure());
      const call = reflection.serverReflectionInfo();
      const services = await new Promise<string[]>((ok, fail) => {
        call.on('data', (m: { listServicesResponse?: { service: Array<{ name: string }> } }) => ok(m.listServicesResponse?.service.map((s) => s.name) ?? []));
        call.on('error', fail);
        call.write({ listServices: '' });
      });
      call.end();
      reflection.close();
      expect(services).toEqual(expect.arrayContaining(['trellis.v1.KnowledgeBaseService', 'trellis.v1.GraphService', 'trellis.v1.RetrievalService', 'trellis.v1.ChatService']));
    });
  });
});
