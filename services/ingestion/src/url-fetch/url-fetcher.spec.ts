import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, TrellisError } from '@trellis/contracts';
import { UrlFetcher } from './url-fetcher';
import type { UrlFetchLimits } from './url-fetcher';

interface TestServer {
  readonly port: number;
  readonly paths: string[];
  close(): Promise<void>;
}

const servers: TestServer[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, host = '127.0.0.1', port = 0): Promise<TestServer> {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const started: TestServer = {
    port: (server.address() as AddressInfo).port,
    paths,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  servers.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const LIMITS: UrlFetchLimits = { timeoutMs: 5_000, maxRedirects: 3, maxBytes: 1024 * 1024, allow: [] };

async function failure(promise: Promise<unknown>): Promise<TrellisError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TrellisError);
  return error as TrellisError;
}

const page = (text: string) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(`<p>${text}</p>`);
};

describe('UrlFetcher', () => {
  it('refuses a loopback URL without connecting, and fetches it once allow-listed', async () => {
    const server = await serve(page('metrics'));
    const url = new URL(`http://127.0.0.1:${server.port}/metrics`);
    const refused = await failure(new UrlFetcher(LIMITS).fetch(url));
    expect(refused.code).toBe(ErrorCode.InvalidArgument);
    expect(refused.message).toMatch(/refusing to fetch .*127\.0\.0\.1 is 127\.0\.0\.1, a loopback address; an operator can allow it with TRELLIS_URL_FETCH_ALLOW/);
    expect(server.paths).toEqual([]);
    expect((await failure(new UrlFetcher(LIMITS).fetch(new URL(`http://[::ffff:127.0.0.1]:${server.port}/`))))
      .message).toMatch(/loopback/);
    expect((await failure(new UrlFetcher(LIMITS).fetch(new URL(`http://localhost:${server.port}/`)))).message).toMatch(/loopback/);

    const allowed = await new UrlFetcher({ ...LIMITS, allow: ['127.0.0.0/8'] }).fetch(url);
    expect(Buffer.from(allowed.bytes).toString()).toBe('<p>metrics</p>');
    expect(allowed.mimeType).toBe('text/html');
    expect(server.paths).toEqual(['/metrics']);
  });

  it('refuses host names that resolve to an internal address, also when only one of their addresses is', async () => {
    const resolver = async (hostname: string) =>
      hostname === 'mixed.test' ? [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.5', family: 4 }] : [{ address: '169.254.169.254', family: 4 }];
    const fetcher = new UrlFetcher(LIMITS, resolver);
    expect((await failure(fetcher.fetch(new URL('http://metadata.test/latest/meta-data/')))).message).toMatch(/metadata\.test is 169\.254\.169\.254, a link-local address/);
    expect((await failure(fetcher.fetch(new URL('http://mixed.test/')))).message).toMatch(/mixed\.test is 10\.0\.0\.5, a private address/);
  });

  it('checks every redirect target: a redirect from an allowed host to loopback is refused', async () => {
    const inside = await serve(page('secret'));
    const outside = await serve((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${inside.port}/metrics` });
      res.end();
    });
    // "public.test" stands for an outside host: allowed by name, its redirect target is not.
    const fetcher = new UrlFetcher({ ...LIMITS, allow: ['public.test'] }, async () => [{ address: '127.0.0.1', family: 4 }]);
    const refused = await failure(fetcher.fetch(new URL(`http://public.test:${outside.port}/doc`)));
    expect(refused.code).toBe(ErrorCode.InvalidArgument);
    expect(refused.message).toMatch(/refusing to fetch http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect(outside.paths).toEqual(['/doc']);
    expect(inside.paths).toEqual([]);
  });

  it('connects to the address it checked, whatever a second DNS answer would say (rebinding)', async () => {
    const checked = await serve(page('checked'), '127.0.0.1');
    const rebound = await serve(page('rebound'), '127.0.0.2', checked.port);
    let lookups = 0;
    const resolver = async () => [{ address: lookups++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    const fetched = await new UrlFetcher({ ...LIMITS, allow: ['127.0.0.1'] }, resolver).fetch(new URL(`http://rebind.test:${checked.port}/`));
    expect(Buffer.from(fetched.bytes).toString()).toBe('<p>checked</p>');
    expect(lookups).toBe(1);
    expect(rebound.paths).toEqual([]);
  });

  it('follows a few redirects and refuses more than the cap', async () => {
    const server = await serve((req, res) => {
      const hop = Number(req.url?.slice(1) || '0');
      if (hop < 10) {
        res.writeHead(301, { location: `/${hop + 1}` });
        res.end();
      } else page('end')(req, res);
    });
    const limits = { ...LIMITS, allow: ['127.0.0.1'] };
    const reached = await new UrlFetcher({ ...limits, maxRedirects: 3 }).fetch(new URL(`http://127.0.0.1:${server.port}/7`));
    expect(Buffer.from(reached.bytes).toString()).toBe('<p>end</p>');
    expect(reached.url.pathname).toBe('/10');
    const tooMany = await failure(new UrlFetcher({ ...limits, maxRedirects: 3 }).fetch(new URL(`http://127.0.0.1:${server.port}/0`)));
    expect(tooMany.code).toBe(ErrorCode.FailedPrecondition);
    expect(tooMany.message).toMatch(/redirected more than 3 times/);
  });

  it('ends a body trickling a byte at a time at the total deadline with DEADLINE_EXCEEDED', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('a'), 100);
      res.on('close', () => clearInterval(timer));
    });
    const started = Date.now();
    const error = await failure(new UrlFetcher({ ...LIMITS, timeoutMs: 800, allow: ['127.0.0.1'] }).fetch(new URL(`http://127.0.0.1:${server.port}/slow`)));
    expect(error.code).toBe(ErrorCode.DeadlineExceeded);
    expect(error.message).toMatch(/took longer than 800 ms \(TRELLIS_URL_FETCH_TIMEOUT_MS\)/);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('ends a DNS lookup that never answers at the total deadline', async () => {
    const started = Date.now();
    const error = await failure(new UrlFetcher({ ...LIMITS, timeoutMs: 300 }, () => new Promise(() => undefined)).fetch(new URL('http://stuck.test/')));
    expect(error.code).toBe(ErrorCode.DeadlineExceeded);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('refuses bodies past the size cap, counted after decompression', async () => {
    const big = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(Buffer.alloc(2 * 1024 * 1024, 'a'));
    });
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 'a'));
    const zipped = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    const fetcher = new UrlFetcher({ ...LIMITS, allow: ['127.0.0.1'] });
    for (const server of [big, zipped]) {
      const error = await failure(fetcher.fetch(new URL(`http://127.0.0.1:${server.port}/`)));
      expect(error.code).toBe(ErrorCode.ResourceExhausted);
      expect(error.message).toMatch(/larger than the upload limit of 1048576 bytes/);
    }
    const small = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync('hello'));
    });
    expect(Buffer.from((await fetcher.fetch(new URL(`http://127.0.0.1:${small.port}/`))).bytes).toString()).toBe('hello');
  });

  it('answers FAILED_PRECONDITION for an unreachable allowed address and an HTTP error', async () => {
    const fetcher = new UrlFetcher({ ...LIMITS, allow: ['127.0.0.1'] });
    expect((await failure(fetcher.fetch(new URL('http://127.0.0.1:1/doc.html')))).code).toBe(ErrorCode.FailedPrecondition);
    const missing = await serve((_req, res) => {
      res.writeHead(404);
      res.end();
    });
    expect((await failure(fetcher.fetch(new URL(`http://127.0.0.1:${missing.port}/gone`)))).message).toMatch(/returned HTTP 404/);
  });
});
