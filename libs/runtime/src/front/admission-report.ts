import type { FrontRejection, FromFront } from './front-messages';

/**
 * Collects the front's admission changes and sends them to the core once per turn of the
 * front's event loop: the metrics live in the core's registry, and a message per call would
 * flood a core that is already behind.
 */
export class AdmissionReport {
  private inFlight = 0;
  private queued = 0;
  private rejected: FrontRejection[] = [];
  private scheduled = false;

  constructor(private readonly send: (message: FromFront) => void) {}

  counts(inFlight: number, queued: number): void {
    this.inFlight = inFlight;
    this.queued = queued;
    this.schedule();
  }

  refused(rejection: FrontRejection): void {
    this.rejected.push(rejection);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const rejected = this.rejected;
      this.rejected = [];
      this.send({ kind: 'admission', inFlight: this.inFlight, queued: this.queued, rejected });
    });
  }
}
