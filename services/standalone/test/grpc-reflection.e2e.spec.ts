import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcReflection } from '@trellis/grpc-edge';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';

// Built at an exact version by scripts/install-deploy-tools.sh (npm test runs it first).
const GRPCURL = join(process.env.TRELLIS_CACHE_DIR ?? join(homedir(), '.cache/trellis'), 'bin/grpcurl');

const TRELLIS_SERVICES = ['trellis.v1.ChatService', 'trellis.v1.GraphService', 'trellis.v1.KnowledgeBaseService', 'trellis.v1.RetrievalService'];

/** Runs grpcurl in plaintext against `address` with no proto files: everything comes from reflection. */
async function grpcurl(address: string, args: string[], input?: string): Promise<string> {
  const flags = ['-plaintext', '-max-time', '30', ...(input === undefined ? [] : ['-d', input])];
  try {
    const { stdout } = await promisify(execFile)(GRPCURL, [...flags, address, ...args], { timeout: 60_000 });
    return stdout;
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`grpcurl ${args.join(' ')} failed: ${e.stderr || e.message}`);
  }
}

beforeAll(() => {
  if (!existsSync(GRPCURL)) throw new Error(`grpcurl is missing at ${GRPCURL}: run bash scripts/install-deploy-tools.sh (it builds grpcurl with go install)`);
});

describe('gRPC reflection of the standalone server, through grpcurl', () => {
  let server: StandaloneProcess;

  beforeAll(async () => {
    server = await startStandaloneProcess();
  });

  afterAll(async () => {
    await server?.dispose();
  });

  it('lists the four Trellis services and the health service', async () => {
    const listed = (await grpcurl(server.grpcAddress, ['list'])).trim().split('\n');
    expect(listed.sort()).toEqual(['grpc.health.v1.Health', ...TRELLIS_SERVICES]);
  });

  it('describes every service', async () => {
    for (const service of [...TRELLIS_SERVICES, 'grpc.health.v1.Health']) {
      const described = await grpcurl(server.grpcAddress, ['describe', service]);
      expect(described).toContain(`${service} is a service:`);
    }
    expect(await grpcurl(server.grpcAddress, ['describe', 'trellis.v1.KnowledgeBaseService'])).toContain(
      'rpc UploadDocument ( stream .trellis.v1.UploadDocumentRequest ) returns ( .trellis.v1.Document );',
    );
    expect(await grpcurl(server.grpcAddress, ['describe', 'grpc.health.v1.Health'])).toContain(
      'rpc Check ( .grpc.health.v1.HealthCheckRequest ) returns ( .grpc.health.v1.HealthCheckResponse );',
    );
  });

  it('describes messages with map fields, under their names in the proto files and with their comments', async () => {
    const document = await grpcurl(server.grpcAddress, ['describe', 'trellis.v1.Document']);
    expect(document).toContain('map<string, string> metadata = 14;');
    expect(document).toContain('string knowledge_base_id = 2;');
    expect(document).toContain('// True when the upload matched the stored content, already indexed, and nothing was done.');
    expect(await grpcurl(server.grpcAddress, ['describe', 'trellis.v1.ChunkHit'])).toContain('map<string, string> document_metadata = 8;');
  });

  it('answers calls made without proto files, map fields included', async () => {
    expect(JSON.parse(await grpcurl(server.grpcAddress, ['grpc.health.v1.Health/Check'], '{}'))).toEqual({ status: 'SERVING' });

    const created = JSON.parse(await grpcurl(server.grpcAddress, ['trellis.v1.KnowledgeBaseService/CreateKnowledgeBase'], '{"name": "reflected", "description": "made by grpcurl"}'));
    expect(created).toMatchObject({ name: 'reflected', description: 'made by grpcurl', chunking: { chunkSizeTokens: 512 } });
    const listed = JSON.parse(await grpcurl(server.grpcAddress, ['trellis.v1.KnowledgeBaseService/ListKnowledgeBases'], '{}'));
    expect(listed).toEqual({ knowledgeBases: [created] });

    // A client stream: the metadata message, then the bytes (base64 in grpcurl's JSON).
    const upload = [
      { metadata: { knowledgeBase: 'reflected', filename: 'note.txt', metadata: { team: 'docs', lang: 'en' } } },
      { data: Buffer.from('Marie Curie was born in Warsaw.').toString('base64') },
    ];
    const document = JSON.parse(await grpcurl(server.grpcAddress, ['trellis.v1.KnowledgeBaseService/UploadDocument'], upload.map((m) => JSON.stringify(m)).join('\n')));
    expect(document).toMatchObject({ knowledgeBaseId: created.id, filename: 'note.txt', metadata: { team: 'docs', lang: 'en' } });
  });
});

describe('gRPC reflection of a process serving some of the services', () => {
  const server = new Server();
  let address: string;

  beforeAll(async () => {
    grpcReflection(['trellis/v1/graph.proto']).addToServer(server);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    address = `127.0.0.1:${port}`;
  });

  afterAll(() => {
    server.forceShutdown();
  });

  it('lists only the services that process serves, and health', async () => {
    expect((await grpcurl(address, ['list'])).trim().split('\n').sort()).toEqual(['grpc.health.v1.Health', 'trellis.v1.GraphService']);
    expect(await grpcurl(address, ['describe', 'trellis.v1.GraphService'])).toContain('rpc ExportGraph ( .trellis.v1.ExportGraphRequest ) returns ( .trellis.v1.Subgraph );');
  });
});
