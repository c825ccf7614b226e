/**
 * How many gRPC calls the core (the main thread) is running right now, kept in shared memory so
 * the front thread can read it while the core is busy: the calls the front has forwarded but the
 * core has not started are waiting in the core's socket, where nothing can shed them.
 */
export class RunningCalls {
  readonly shared: SharedArrayBuffer;
  private readonly view: Int32Array;

  constructor(shared = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)) {
    this.shared = shared;
    this.view = new Int32Array(shared);
  }

  started(): void {
    Atomics.add(this.view, 0, 1);
  }

  finished(): void {
    Atomics.sub(this.view, 0, 1);
  }

  count(): number {
    return Atomics.load(this.view, 0);
  }
}
