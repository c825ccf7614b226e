import { Catch } from '@nestjs/common';
import type { ArgumentsHost, RpcExceptionFilter } from '@nestjs/common';
import { throwError } from 'rxjs';
import type { Observable } from 'rxjs';
import type { Logger } from '@trellis/observability';
import { toGrpcError } from './grpc-errors';

/** Turns every error a gRPC handler throws into a proper status; logs internal ones in full. */
@Catch()
export class GrpcExceptionFilter implements RpcExceptionFilter<unknown> {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): Observable<never> {
    const { grpc, internal } = toGrpcError(exception);
    if (internal) {
      const handler = host.getType() === 'rpc' ? host.switchToRpc().getContext()?.constructor?.name : undefined;
      this.logger.error({ err: exception, handler }, 'gRPC handler failed');
    }
    return throwError(() => grpc);
  }
}
