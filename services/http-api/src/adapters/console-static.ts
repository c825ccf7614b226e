import { createReadStream, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

/** Content types of the files a Vite build writes. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** The paths the app routes itself: single-slash segments of letters, digits, `-` and `_`. */
const APP_ROUTE = /^(\/[\w-]+)*\/?$/;

/** Answers a request the HTTP API did not claim: true when it did (a file, the SPA page, or an error). */
export type ConsoleHandler = (req: IncomingMessage, res: ServerResponse, path: string) => boolean;

/**
 * The web console: the files of its build (`apps/console/dist`), and its index.html for any
 * other GET path so the browser app routes them itself. Only GET and HEAD; a path that leaves
 * the build folder (`..`, an encoded slash or NUL) is refused, never resolved. Vite names its
 * assets by content hash, so those are cached for good; index.html is revalidated every time.
 * When the console was not built, every path says so (503) instead of a bare 404.
 */
export function createConsoleHandler(root: string): ConsoleHandler {
  const base = normalize(root).replace(/[/\\]+$/, '');
  return (req, res, path) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const index = join(base, 'index.html');
    if (!isFile(index)) {
      send(res, req, 503, 'text/plain; charset=utf-8', `The web console is not built (no ${index}): run npm run build.\n`);
      return true;
    }
    const file = resolveInside(base, path);
    if (file === null) {
      send(res, req, 400, 'text/plain; charset=utf-8', 'bad path\n');
      return true;
    }
    if (file !== undefined && isFile(file)) {
      const immutable = path.startsWith('/assets/');
      serveFile(req, res, file, immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      return true;
    }
    // A missing asset is a 404, and so is anything not shaped like a page of the app (`/graph`, `/chat/x`).
    if (path.startsWith('/assets/') || !APP_ROUTE.test(path)) {
      send(res, req, 404, 'text/plain; charset=utf-8', 'not found\n');
      return true;
    }
    serveFile(req, res, index, 'no-cache');
    return true;
  };
}

/**
 * The file a URL path names inside `base`: undefined for the root (the index page), null when
 * the path is not acceptable (undecodable, NUL, backslash or encoded separators, or escaping).
 */
export function resolveInside(base: string, path: string): string | null | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\') || /%2f|%5c/i.test(path)) return null;
  const segments = decoded.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.some((s) => s === '..')) return null;
  if (segments.length === 0) return undefined;
  const file = join(base, ...segments);
  return file.startsWith(base + sep) ? file : null;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function serveFile(req: IncomingMessage, res: ServerResponse, file: string, cacheControl: string): void {
  const size = statSync(file).size;
  res.writeHead(200, {
    'content-type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'content-length': String(size),
    'cache-control': cacheControl,
    'x-content-type-options': 'nosniff',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}

function send(res: ServerResponse, req: IncomingMessage, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)), 'x-content-type-options': 'nosniff' });
  res.end(req.method === 'HEAD' ? undefined : body);
}
