import { Injectable } from '@nestjs/common';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { finalize } from 'rxjs';
import type { Observable } from 'rxjs';
import type { RunningCalls } from './running-calls';

/** Counts each gRPC call from when its handler starts until it ends or is cancelled (behind a front thread). */
@Injectable()
export class RunningCallsInterceptor implements NestInterceptor {
  constructor(private readonly running: RunningCalls) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    this.running.started();
    return next.handle().pipe(finalize(() => this.running.finished()));
  }
}
