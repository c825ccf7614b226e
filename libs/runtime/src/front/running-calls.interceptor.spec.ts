import { lastValueFrom, of } from 'rxjs';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { RunningCalls } from './running-calls';
import { RunningCallsInterceptor } from './running-calls.interceptor';

const rpc = { getType: () => 'rpc' } as unknown as ExecutionContext;

describe('RunningCallsInterceptor', () => {
  it('counts a call while it runs, and marks the loop running again when it ends', async () => {
    const running = new RunningCalls();
    const marks: number[] = [];
    const interceptor = new RunningCallsInterceptor(running, { markRunning: () => void marks.push(running.count()) });
    const handler: CallHandler = { handle: () => of('reply') };

    const reply = interceptor.intercept(rpc, handler);
    expect(running.count()).toBe(1);
    expect(marks).toEqual([]);
    expect(await lastValueFrom(reply)).toBe('reply');
    // Marked once, after the call stopped counting: the front reads the loop as free, not as still behind.
    expect(marks).toEqual([0]);
    expect(running.count()).toBe(0);
  });
});
