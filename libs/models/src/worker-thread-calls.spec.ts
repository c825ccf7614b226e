import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerThreadCalls } from './worker-thread-calls';

/**
 * A worker thread that answers `{ id, value, after }` with the value after `after` ms; a value
 * of 'fail' is answered with an error, 'exit' ends the thread with code 3, 'throw' throws
 * outside any handler. It says "ready" first, with no id, as the embedding worker does. A
 * farewell \`{ bye: 'leave' }\` closes its port once the calls it runs are done (so the thread
 * exits by itself); \`{ bye: 'stay' }\` is ignored.
 */
const SCRIPT = `
const { parentPort } = require('node:worker_threads');
parentPort.postMessage({ kind: 'ready' });
let running = 0;
let leaving = false;
parentPort.on('message', ({ id, value, after, bye }) => {
  if (bye === 'leave') leaving = true;
  if (bye !== undefined) return leaving && running === 0 && parentPort.close();
  running++;
  setTimeout(() => {
  running--;
  if (value === 'exit') process.exit(3);
  if (value === 'throw') throw new Error('the thread broke');
  parentPort.postMessage(value === 'fail' ? { id, error: 'no answer for that' } : { id, result: value });
  if (leaving && running === 0) parentPort.close();
}, after ?? 0);
});
`;

type Request = { readonly value: string; readonly after?: number };

const ERRORS = {
  replied: (message: string) => new Error(`test thread: ${message}`),
  exited: (code: number) => new Error(`test thread exited with code ${code}`),
};

describe('WorkerThreadCalls', () => {
  const started: Array<WorkerThreadCalls<Request, string>> = [];
  const start = (onFailure?: (error: Error) => void) => {
    const calls = new WorkerThreadCalls<Request, string>(new Worker(SCRIPT, { eval: true }), ERRORS, onFailure);
    started.push(calls);
    return calls;
  };
  afterEach(async () => {
    await Promise.all(started.splice(0).map((calls) => calls.terminate()));
  });

  it('answers each call with the reply that carries its id, in whatever order the replies come', async () => {
    const calls = start();
    const answers = Promise.all([calls.call({ value: 'slow', after: 60 }), calls.call({ value: 'fast' }), calls.call({ value: 'middle', after: 20 })]);
    expect(calls.owed).toBe(3);
    expect(await answers).toEqual(['slow', 'fast', 'middle']);
    expect(calls.owed).toBe(0);
  });

  it("fails only the call the thread answered with an error, worded by the caller's errors", async () => {
    const calls = start();
    const [failed, answered] = await Promise.allSettled([calls.call({ value: 'fail' }), calls.call({ value: 'fine', after: 10 })]);
    expect(failed).toEqual({ status: 'rejected', reason: new Error('test thread: no answer for that') });
    expect(answered).toEqual({ status: 'fulfilled', value: 'fine' });
    expect(await calls.call({ value: 'still here' })).toBe('still here');
  });

  it.each([
    ['exits', 'exit', 'test thread exited with code 3'],
    ['crashes', 'throw', 'the thread broke'],
  ])('fails every call a thread owed when it %s, and every later call, with one reason said once', async (_, value, reason) => {
    const failures: Error[] = [];
    const calls = start((error) => failures.push(error));
    const owed = expect(calls.call({ value: 'never answered', after: 500 })).rejects.toThrow(reason);
    await expect(calls.call({ value })).rejects.toThrow(reason);
    await owed;
    await expect(calls.call({ value: 'after it stopped' })).rejects.toThrow(reason);
    // After a crash the thread exits too: that is not a second failure.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(failures.map((e) => e.message)).toEqual([reason]);
    expect(calls.owed).toBe(0);
  });

  it('fails the calls owed at terminate with the reason given', async () => {
    const calls = start();
    const owed = expect(calls.call({ value: 'never answered', after: 500 })).rejects.toThrow('closed by its owner');
    await calls.terminate(new Error('closed by its owner'));
    await owed;
    await expect(calls.call({ value: 'after close' })).rejects.toThrow('closed by its owner');
  });

  it.each([
    ['finishes its call and exits by itself when it heeds the farewell', 'leave', 0],
    ['is terminated after the grace period when it ignores the farewell', 'stay', 1],
  ])('on close, fails the calls owed at once; the thread %s', async (_, bye, exitCode) => {
    const worker = new Worker(SCRIPT, { eval: true });
    const exit = new Promise<number>((resolve) => worker.once('exit', resolve));
    const calls = new WorkerThreadCalls<Request, string>(worker, ERRORS);
    const owed = calls.call({ value: 'in the middle of it', after: 150 });
    const failedAt = owed.then(
      () => -1,
      () => Date.now(),
    );
    const started = Date.now();
    await calls.close(new Error('closed by its owner'), { bye }, 400);
    await expect(owed).rejects.toThrow('closed by its owner');
    expect((await failedAt) - started).toBeLessThan(100);
    expect(await exit).toBe(exitCode);
    await expect(calls.call({ value: 'after close' })).rejects.toThrow('closed by its owner');
  });

  it('keeps the process alive while the thread owes answers, and not once it is idle', () => {
    // A process that makes one slow call and then leaves the thread running: it must wait for
    // the answer, then end on its own.
    const program = `
      const { Worker } = require('node:worker_threads');
      const { WorkerThreadCalls } = require(${JSON.stringify(join(__dirname, 'worker-thread-calls.ts'))});
      const calls = new WorkerThreadCalls(new Worker(${JSON.stringify(SCRIPT)}, { eval: true }), ${'{ replied: (m) => new Error(m), exited: (c) => new Error(String(c)) }'});
      calls.call({ value: 'answered', after: 300 }).then((value) => console.log(value));
    `;
    const run = spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', program], { encoding: 'utf8', timeout: 20_000 });
    expect(run.error).toBeUndefined();
    expect([run.status, run.stdout.trim()]).toEqual([0, 'answered']);
  });
});
