import { Injectable } from '@nestjs/common';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { finalize } from 'rxjs';
import type { Observable } from 'rxjs';
import type { EventLoopDelay } from '@trellis/grpc-edge';
import type { RunningCalls } from './running-calls';

/**
 * Counts each gRPC call from when its handler starts until it ends or is cancelled (behind a
 * front thread), and tells the loop-delay record that the loop runs again when one ends.
 */
@Injectable()
export class RunningCallsInterceptor implements NestInterceptor {
  constructor(
    private readonly running: RunningCalls,
    private readonly loop: Pick<EventLoopDelay, 'markRunning'>,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    this.running.started();
    return next.handle().pipe(
      finalize(() => {
        this.running.finished();
        this.loop.markRunning();
      }),
    );
  }
}
