import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Metadata, Server, ServerCredentials, credentials, status } from '@grpc/grpc-js';
import type { ServerDuplexStream, ServerReadableStream, ServerUnaryCall, ServerWritableStream, ServiceError, StatusObject, sendUnaryData } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forwardCall, passBytes } from './grpc-forwarder';

/** What the fake core saw of a call: its metadata (binary values base64), deadline and request bytes. */
interface Seen {
  readonly metadata: Record<string, string>;
  readonly deadline: number | null;
  readonly request: string;
}

const seen = (metadata: Metadata, deadline: number | Date, request: string): Buffer => {
  const map = Object.fromEntries(Object.entries(metadata.getMap()).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('base64') : v]));
  return Buffer.from(JSON.stringify({ metadata: map, deadline: deadline instanceof Date ? deadline.getTime() : deadline, request } satisfies Seen));
};

const headers = (entries: Record<string, string>): Metadata => {
  const metadata = new Metadata();
  for (const [k, v] of Object.entries(entries)) metadata.set(k, v);
  return metadata;
};

/** A core with one method of each kind, one that fails with trailers, and one that never answers. */
function fakeCore(cancelled: () => void): Server {
  const core = new Server();
  core.register(
    '/test.Echo/Unary',
    (call: ServerUnaryCall<Buffer, Buffer>, done: sendUnaryData<Buffer>) => {
      call.sendMetadata(headers({ 'x-core-header': 'from the core' }));
      done(null, seen(call.metadata, call.getDeadline(), call.request.toString()), headers({ 'x-core-trailer': 'after the answer' }));
    },
    passBytes,
    passBytes,
    'unary',
  );
  core.register(
    '/test.Echo/Fail',
    (_call: ServerUnaryCall<Buffer, Buffer>, done: sendUnaryData<Buffer>) => done({ code: status.NOT_FOUND, details: 'no such thing', metadata: headers({ 'x-why': 'because' }) }),
    passBytes,
    passBytes,
    'unary',
  );
  core.register(
    '/test.Echo/ClientStream',
    (call: ServerReadableStream<Buffer, Buffer>, done: sendUnaryData<Buffer>) => {
      const parts: string[] = [];
      call.on('data', (m: Buffer) => parts.push(m.toString()));
      call.on('end', () => done(null, Buffer.from(parts.join('+'))));
    },
    passBytes,
    passBytes,
    'clientStream',
  );
  core.register(
    '/test.Echo/ServerStream',
    (call: ServerWritableStream<Buffer, Buffer>) => {
      const count = Number(call.request.toString());
      for (let i = 0; i < count; i++) call.write(Buffer.from(`part ${i} `.repeat(200)));
      call.end(headers({ 'x-parts': String(count) }));
    },
    passBytes,
    passBytes,
    'serverStream',
  );
  core.register(
    '/test.Echo/Bidi',
    (call: ServerDuplexStream<Buffer, Buffer>) => {
      call.on('data', (m: Buffer) => call.write(Buffer.from(m.toString().toUpperCase())));
      call.on('end', () => call.end());
    },
    passBytes,
    passBytes,
    'bidi',
  );
  core.register('/test.Echo/Hang', (call: ServerUnaryCall<Buffer, Buffer>) => call.on('cancelled', cancelled), passBytes, passBytes, 'unary');
  return core;
}

const PATHS = ['/test.Echo/Unary', '/test.Echo/Fail', '/test.Echo/ClientStream', '/test.Echo/ServerStream', '/test.Echo/Bidi', '/test.Echo/Hang'];

function bind(server: Server, address: string): Promise<number> {
  return new Promise((resolve, reject) => server.bindAsync(address, ServerCredentials.createInsecure(), (e, port) => (e ? reject(e) : resolve(port))));
}

describe('forwardCall: the front passes calls of every kind to the core unchanged', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-forwarder-'));
  let coreCancelled!: Promise<void>;
  let core: Server;
  let front: Server;
  let toCore: Client;
  let client: Client;
  let endedCalls = 0;

  beforeAll(async () => {
    let markCancelled!: () => void;
    coreCancelled = new Promise((r) => (markCancelled = r));
    core = fakeCore(() => markCancelled());
    const coreAddress = `unix://${join(dir, 'core.sock')}`;
    await bind(core, coreAddress);
    toCore = new Client(coreAddress, credentials.createInsecure());
    front = new Server();
    for (const path of PATHS) front.register(path, (call: ServerDuplexStream<Buffer, Buffer>) => forwardCall(toCore, call, () => (endedCalls += 1)), passBytes, passBytes, 'bidi');
    const port = await bind(front, '127.0.0.1:0');
    client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  });

  afterAll(() => {
    client?.close();
    toCore?.close();
    front?.forceShutdown();
    core?.forceShutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('unary: request bytes, metadata (binary too) and the deadline reach the core; its headers, answer and trailers come back', async () => {
    const deadline = Date.now() + 5_000;
    const metadata = headers({ authorization: 'Bearer key-of-a', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    metadata.set('x-blob-bin', Buffer.from([0, 1, 2, 255]));
    let responseHeaders: Metadata | undefined;
    let trailers: StatusObject | undefined;
    const answer = await new Promise<Buffer>((resolve, reject) => {
      const call = client.makeUnaryRequest('/test.Echo/Unary', passBytes, passBytes, Buffer.from('the question'), metadata, { deadline }, (e, v) => (e ? reject(e) : resolve(v!)));
      call.on('metadata', (m: Metadata) => (responseHeaders = m));
      call.on('status', (s: StatusObject) => (trailers = s));
    });
    const atCore = JSON.parse(answer.toString()) as Seen;
    expect(atCore.request).toBe('the question');
    expect(atCore.metadata).toMatchObject({ authorization: 'Bearer key-of-a', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'x-blob-bin': Buffer.from([0, 1, 2, 255]).toString('base64') });
    expect(Math.abs((atCore.deadline ?? Infinity) - deadline)).toBeLessThan(200);
    expect(responseHeaders?.get('x-core-header')).toEqual(['from the core']);
    await new Promise((r) => setImmediate(r));
    expect(trailers?.metadata.get('x-core-trailer')).toEqual(['after the answer']);
  });

  it('a call without a deadline reaches the core without one', async () => {
    const answer = await new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest('/test.Echo/Unary', passBytes, passBytes, Buffer.from('x'), new Metadata(), {}, (e, v) => (e ? reject(e) : resolve(v!))),
    );
    // grpc-js reports "no deadline" as Infinity, which JSON writes as null.
    expect((JSON.parse(answer.toString()) as Seen).deadline).toBeNull();
  });

  it("the core's failure comes back with its code, message and trailers", async () => {
    const error = await new Promise<ServiceError>((resolve) =>
      client.makeUnaryRequest('/test.Echo/Fail', passBytes, passBytes, Buffer.from(''), new Metadata(), {}, (e) => resolve(e!)),
    );
    expect(error.code).toBe(status.NOT_FOUND);
    expect(error.details).toBe('no such thing');
    expect(error.metadata.get('x-why')).toEqual(['because']);
  });

  it('client streaming: every message reaches the core in order', async () => {
    const answer = await new Promise<Buffer>((resolve, reject) => {
      const call = client.makeClientStreamRequest('/test.Echo/ClientStream', passBytes, passBytes, new Metadata(), {}, (e, v) => (e ? reject(e) : resolve(v!)));
      for (const part of ['one', 'two', 'three']) call.write(Buffer.from(part));
      call.end();
    });
    expect(answer.toString()).toBe('one+two+three');
  });

  it('server streaming: every response message, in order, then the trailers', async () => {
    const call = client.makeServerStreamRequest('/test.Echo/ServerStream', passBytes, passBytes, Buffer.from('300'), new Metadata(), {});
    const received: string[] = [];
    const trailers = await new Promise<StatusObject>((resolve) => {
      call.on('data', (m: Buffer) => received.push(m.toString()));
      call.on('status', resolve);
    });
    expect(trailers.code).toBe(status.OK);
    expect(trailers.metadata.get('x-parts')).toEqual(['300']);
    expect(received).toHaveLength(300);
    expect(received[299]).toBe('part 299 '.repeat(200));
  });

  it('bidirectional streaming: answers interleave with requests', async () => {
    const call = client.makeBidiStreamRequest('/test.Echo/Bidi', passBytes, passBytes, new Metadata(), {});
    const echo = (text: string) =>
      new Promise<string>((resolve) => {
        call.once('data', (m: Buffer) => resolve(m.toString()));
        call.write(Buffer.from(text));
      });
    expect(await echo('first')).toBe('FIRST');
    expect(await echo('second')).toBe('SECOND');
    const done = new Promise<StatusObject>((resolve) => call.on('status', resolve));
    call.end();
    expect((await done).code).toBe(status.OK);
  });

  it("a caller that cancels cancels the core's call, and the front hears the call is over", async () => {
    const before = endedCalls;
    const call = client.makeUnaryRequest('/test.Echo/Hang', passBytes, passBytes, Buffer.from(''), new Metadata(), {}, () => undefined);
    await new Promise((r) => setTimeout(r, 100));
    call.cancel();
    await coreCancelled;
    await expect.poll(() => endedCalls).toBeGreaterThan(before);
  });
});
