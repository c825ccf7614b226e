import type { Transferable, Worker } from 'node:worker_threads';

/** A request as the worker thread receives it: the caller's fields and the id its reply carries. */
export type ThreadRequest<Q extends object> = Q & { readonly id: number };

/** A worker thread's answer to one request: the result, or the message of the error it met. */
export type ThreadReply<R> = { readonly id: number; readonly result: R } | { readonly id: number; readonly error: string };

/** The errors the calls fail with, worded for the thread's callers. */
export interface ThreadErrors {
  /** A call the thread answered with an error message. */
  readonly replied: (message: string) => Error;
  /** The calls a thread still owed when it exited. */
  readonly exited: (code: number) => Error;
}

interface Waiter<R> {
  readonly resolve: (result: R) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Calls to one worker thread, each answered by the reply that carries its id. A thread that
 * dies (an uncaught error, an exit, a terminate) fails every call it still owes and every later
 * one, with the first reason. The thread is referenced only while it owes answers, so an idle
 * one never keeps the process alive. Messages without a numeric id (a thread's "ready") are
 * left to other listeners.
 */
export class WorkerThreadCalls<Q extends object, R> {
  private readonly waiting = new Map<number, Waiter<R>>();
  private nextId = 0;
  private failure: Error | null = null;
  private exited = false;

  /** `onFailure` hears the first reason the thread stopped answering, once. */
  constructor(
    private readonly worker: Worker,
    private readonly errors: ThreadErrors,
    private readonly onFailure: (error: Error) => void = () => undefined,
  ) {
    worker.on('message', (reply: unknown) => this.answer(reply));
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => {
      this.exited = true;
      this.fail(errors.exited(code));
    });
    worker.unref();
  }

  /** How many calls the thread has yet to answer. */
  get owed(): number {
    return this.waiting.size;
  }

  call(request: Q, transfer: readonly Transferable[] = []): Promise<R> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id } satisfies ThreadRequest<Q>, transfer);
    });
  }

  /** Stops the thread; the calls it owes fail with `reason` when given, else as at any exit. */
  async terminate(reason?: Error): Promise<void> {
    if (reason) this.fail(reason);
    await this.worker.terminate();
  }

  /**
   * Fails the calls the thread owes with `reason` at once, then asks the thread to end itself
   * with `farewell` and waits up to `graceMs` for it to exit before terminating it. For threads
   * that hold native resources (an ONNX session): terminating one in the middle of a native call
   * can abort the whole process, while a thread that finishes its call, frees what it holds and
   * closes its port exits cleanly.
   */
  async close(reason: Error, farewell: object, graceMs: number): Promise<void> {
    this.fail(reason);
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.ref();
    this.worker.postMessage(farewell);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    const outcome = await Promise.race([exited, late]);
    clearTimeout(timer);
    if (outcome === 'late') await this.worker.terminate();
  }

  private answer(reply: unknown): void {
    if (typeof reply !== 'object' || reply === null || typeof (reply as { id?: unknown }).id !== 'number') return;
    const answer = reply as ThreadReply<R>;
    const waiter = this.waiting.get(answer.id);
    if (waiter === undefined) return;
    this.waiting.delete(answer.id);
    if (this.waiting.size === 0) this.worker.unref();
    if ('error' in answer) waiter.reject(this.errors.replied(answer.error));
    else waiter.resolve(answer.result);
  }

  private fail(error: Error): void {
    const first = this.failure === null;
    this.failure ??= error;
    for (const waiter of this.waiting.values()) waiter.reject(this.failure);
    this.waiting.clear();
    if (first) this.onFailure(this.failure);
  }
}
