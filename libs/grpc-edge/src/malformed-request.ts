import { Injectable } from '@nestjs/common';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { isObservable, map } from 'rxjs';
import type { Observable } from 'rxjs';
import { TrellisError } from '@trellis/contracts';

const MALFORMED = Symbol('trellis.malformed-request');

interface Malformed {
  readonly [MALFORMED]: string;
}

interface MethodDefinition {
  requestDeserialize?: (bytes: Buffer) => unknown;
}

/**
 * Makes every method of the loaded services decode requests without throwing. grpc-js answers
 * a request it cannot decode (a wrong wire type, a truncated message) with INTERNAL "Error
 * deserializing request", as if the server had failed; instead, such a request reaches the
 * handler chain as a marker that `MalformedRequestInterceptor` turns into INVALID_ARGUMENT.
 */
export function guardRequestDecoding(definition: object): void {
  for (const service of Object.values(definition as Record<string, unknown>)) {
    if (service === null || typeof service !== 'object') continue;
    for (const method of Object.values(service as Record<string, MethodDefinition>)) {
      const decode = method?.requestDeserialize;
      if (typeof decode !== 'function') continue;
      method.requestDeserialize = (bytes: Buffer) => {
        try {
          return decode(bytes);
        } catch (error) {
          return { [MALFORMED]: (error as Error).message } satisfies Malformed;
        }
      };
    }
  }
}

function refuseMalformed<T>(message: T): T {
  if (message !== null && typeof message === 'object' && MALFORMED in message) {
    throw TrellisError.invalid(`malformed request: ${(message as unknown as Malformed)[MALFORMED]} (the message does not match the method's protobuf type)`);
  }
  return message;
}

/** Answers INVALID_ARGUMENT for a request (or a message of a request stream) that did not decode. */
@Injectable()
export class MalformedRequestInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'rpc') {
      const args = context.getArgs<unknown[]>();
      if (isObservable(args[0])) args[0] = keepDrainBuffer(args[0], args[0].pipe(map(refuseMalformed)));
      else refuseMalformed(args[0]);
    }
    return next.handle();
  }
}

/**
 * Nest's stream methods call `drainBuffer` on their first argument to release the messages
 * that arrived before the handler ran; a wrapped stream must keep it reachable.
 */
export function keepDrainBuffer<T>(source: Observable<T>, wrapped: Observable<T>): Observable<T> {
  const drain = (source as { drainBuffer?: unknown }).drainBuffer;
  if (typeof drain === 'function') Object.defineProperty(wrapped, 'drainBuffer', { value: drain });
  return wrapped;
}
