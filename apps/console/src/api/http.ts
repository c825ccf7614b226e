/**
 * The one door to the REST API: the API key (Bearer, kept in localStorage), deadlines on every
 * call, calls the server sheds (429) sent again after its Retry-After, and errors read from
 * `application/problem+json` into ApiError. Every page calls through
 * here, so no request can hang and every failure has a message to show.
 */

const API_KEY_STORAGE = 'trellis.apiKey';
/** Deadline of a plain call. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** A stream (chat) fails when no byte arrives for this long. */
export const STREAM_IDLE_TIMEOUT_MS = 120_000;
/** Deadline of one file upload. */
export const UPLOAD_TIMEOUT_MS = 300_000;

/** A server shedding load answers 429 with Retry-After: calls are sent again this many times, within their deadline. */
const SHED_RETRIES = 6;

/** The wait a 429 asks for (Retry-After, seconds), at least 0.2 s and at most 5 s. */
function retryAfterMs(header: string | null): number {
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(5_000, Math.max(200, seconds * 1000)) : 1_000;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    });
  });
}

/** fetch, sending the request again while the server sheds it (429) and the deadline allows. */
async function fetchShed(url: string, init: RequestInit & { signal: AbortSignal }): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url, init);
    if (response.status !== 429 || attempt >= SHED_RETRIES) return response;
    await response.body?.cancel();
    await pause(retryAfterMs(response.headers.get('retry-after')), init.signal);
  }
}

/** A failed call: the HTTP status (0 when the server was not reached) and the message to show. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly field?: string,
  ) {
    super(status > 0 ? `${status} ${title}: ${detail}` : detail);
    this.name = 'ApiError';
  }
}

export function apiKey(): string {
  return localStorage.getItem(API_KEY_STORAGE) ?? '';
}

export function setApiKey(key: string): void {
  if (key.trim() === '') localStorage.removeItem(API_KEY_STORAGE);
  else localStorage.setItem(API_KEY_STORAGE, key.trim());
}

function headers(json: boolean): Record<string, string> {
  const key = apiKey();
  return { accept: 'application/json', ...(json ? { 'content-type': 'application/json' } : {}), ...(key ? { authorization: `Bearer ${key}` } : {}) };
}

/** The error a non-2xx response stands for: its problem details when it has them, its status line otherwise. */
export async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  try {
    const problem = JSON.parse(text) as { title?: string; detail?: string; field?: string; error?: { message?: string } };
    const detail = problem.detail ?? problem.error?.message ?? (text || response.statusText);
    return new ApiError(response.status, problem.title ?? response.statusText, detail, problem.field);
  } catch {
    return new ApiError(response.status, response.statusText || 'Error', text.trim() || 'the server answered without details');
  }
}

function failure(error: unknown, timeoutMs: number, what: string): ApiError {
  if (error instanceof ApiError) return error;
  const name = (error as { name?: string })?.name;
  if (name === 'TimeoutError') return new ApiError(0, 'Timeout', `${what} took longer than ${Math.round(timeoutMs / 1000)} s and was given up`);
  if (name === 'AbortError') return new ApiError(0, 'Cancelled', `${what} was cancelled`);
  return new ApiError(0, 'Network error', `could not reach the Trellis server (${(error as Error)?.message ?? String(error)})`);
}

export interface CallOptions {
  readonly method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Sent as JSON. */
  readonly body?: unknown;
  readonly query?: Record<string, string | number | undefined>;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

function withQuery(path: string, query: CallOptions['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') params.set(k, String(v));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

function deadline(timeoutMs: number, signal?: AbortSignal): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([timeout, signal]) : timeout;
}

/** One JSON call of the REST API. */
export async function call<T>(path: string, options: CallOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const what = `${options.method ?? 'GET'} ${path}`;
  try {
    const response = await fetchShed(withQuery(path, options.query), {
      method: options.method ?? 'GET',
      headers: headers(options.body !== undefined),
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: deadline(timeoutMs, options.signal),
    });
    if (!response.ok) throw await errorOf(response);
    return (await response.json()) as T;
  } catch (error) {
    throw failure(error, timeoutMs, what);
  }
}

/** One server-sent event. */
export interface ServerEvent {
  readonly event: string;
  readonly data: string;
}

/**
 * A POST answered with server-sent events, read as they arrive. A refusal before the stream
 * opens is an ApiError like any call's; a stream quiet for STREAM_IDLE_TIMEOUT_MS is given up.
 */
export async function* postEvents(path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<ServerEvent> {
  const idle = new AbortController();
  let timer = setTimeout(() => idle.abort(new DOMException('idle', 'TimeoutError')), STREAM_IDLE_TIMEOUT_MS);
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => idle.abort(new DOMException('idle', 'TimeoutError')), STREAM_IDLE_TIMEOUT_MS);
  };
  const what = `the answer stream of ${path}`;
  try {
    const response = await fetchShed(path, {
      method: 'POST',
      headers: { ...headers(true), accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([idle.signal, signal]) : idle.signal,
    });
    if (!response.ok) throw await errorOf(response);
    if (response.body === null) throw new ApiError(response.status, 'Empty stream', 'the server sent no events');
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      touch();
      buffer += value.replace(/\r\n/g, '\n');
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const event = parseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (event !== undefined) yield event;
        end = buffer.indexOf('\n\n');
      }
    }
  } catch (error) {
    throw failure(error, STREAM_IDLE_TIMEOUT_MS, what);
  } finally {
    clearTimeout(timer);
  }
}

function parseEvent(block: string): ServerEvent | undefined {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  return data.length === 0 ? undefined : { event, data: data.join('\n') };
}

/**
 * A multipart upload with progress (XMLHttpRequest: fetch reports no upload progress).
 * `onProgress` gets the fraction of the body sent, 0..1.
 */
export async function uploadForm<T>(path: string, form: FormData, onProgress: (fraction: number) => void, timeoutMs = UPLOAD_TIMEOUT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    const answer = await sendForm(path, form, onProgress, Math.max(1, deadline - Date.now()));
    if (answer.status === 429 && attempt < SHED_RETRIES && Date.now() < deadline) {
      await pause(retryAfterMs(answer.retryAfter));
      continue;
    }
    if (answer.status >= 200 && answer.status < 300) {
      onProgress(1);
      return JSON.parse(answer.body) as T;
    }
    throw await errorOf(new Response(answer.body, { status: answer.status, statusText: answer.statusText }));
  }
}

interface FormAnswer {
  readonly status: number;
  readonly statusText: string;
  readonly body: string;
  readonly retryAfter: string | null;
}

function sendForm(path: string, form: FormData, onProgress: (fraction: number) => void, timeoutMs: number): Promise<FormAnswer> {
  return new Promise<FormAnswer>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.timeout = timeoutMs;
    const key = apiKey();
    if (key) xhr.setRequestHeader('authorization', `Bearer ${key}`);
    xhr.setRequestHeader('accept', 'application/json');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => resolve({ status: xhr.status, statusText: xhr.statusText, body: xhr.responseText, retryAfter: xhr.getResponseHeader('retry-after') });
    xhr.onerror = () => reject(new ApiError(0, 'Network error', `the upload to ${path} failed: the server closed the connection or could not be reached`));
    xhr.ontimeout = () => reject(new ApiError(0, 'Timeout', `the upload took longer than ${Math.round(timeoutMs / 1000)} s and was given up`));
    xhr.send(form);
  });
}
