import { Metadata, status } from '@grpc/grpc-js';
import type { Client, ServerDuplexStream, StatusObject } from '@grpc/grpc-js';

/** Messages pass through as the bytes they arrived as: the core decodes them, the front never does. */
export const passBytes = (bytes: Buffer): Buffer => bytes;

/**
 * Headers the HTTP/2 layer of each hop writes for itself; copied from one hop to the next they
 * would be sent twice.
 */
const HOP_HEADERS = ['content-type', 'date', 'te', 'user-agent', 'grpc-encoding', 'grpc-accept-encoding', 'accept-encoding'];

function withoutHopHeaders(metadata: Metadata): Metadata {
  const copy = metadata.clone();
  for (const name of HOP_HEADERS) copy.remove(name);
  return copy;
}

interface MessageSink {
  write(message: Buffer): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/** Writes `message` to `to`; while `to`'s buffer is full, `from` is paused (back-pressure both ways). */
function relay(message: Buffer, to: MessageSink, from: Pick<NodeJS.ReadableStream, 'pause' | 'resume'>): void {
  if (!to.write(message)) {
    from.pause();
    to.once('drain', () => from.resume());
  }
}

/**
 * Forwards one call to the core, whatever the method's kind: request metadata, the caller's
 * deadline (as the forwarded call's own), every message both ways as bytes with back-pressure,
 * then the core's response metadata, status and trailers; a caller that cancels, or whose
 * deadline passes, cancels the forwarded call. Unary and streaming calls look the same on the
 * wire (headers, messages, half-close, trailers), so every call is forwarded as a stream and
 * the core, which knows each method's kind, applies its rules (one request for a unary call).
 * `ended` runs once, when the call is over either way.
 */
export function forwardCall(core: Client, call: ServerDuplexStream<Buffer, Buffer>, ended: () => void): void {
  const upstream = core.makeBidiStreamRequest(call.getPath(), passBytes, passBytes, withoutHopHeaders(call.metadata), { deadline: call.getDeadline() });
  let over = false;
  const finish = () => {
    if (over) return;
    over = true;
    ended();
  };
  call.on('data', (message: Buffer) => relay(message, upstream, call));
  call.on('end', () => upstream.end());
  call.on('cancelled', () => {
    upstream.cancel();
    finish();
  });
  upstream.on('metadata', (metadata: Metadata) => call.sendMetadata(withoutHopHeaders(metadata)));
  upstream.on('data', (message: Buffer) => relay(message, call, upstream));
  // The status carries every failure; the stream's 'error' event repeats it.
  upstream.on('error', () => undefined);
  // The status can arrive while responses are still buffered: answer once both are through.
  let outcome: StatusObject | undefined;
  let drained = false;
  const answer = () => {
    if (outcome === undefined || !drained || over) return;
    finish();
    if (outcome.code === status.OK) call.end(outcome.metadata);
    else call.emit('error', { code: outcome.code, details: outcome.details, metadata: outcome.metadata });
  };
  upstream.on('status', (received: StatusObject) => {
    outcome = received;
    answer();
  });
  upstream.on('end', () => {
    drained = true;
    answer();
  });
}
