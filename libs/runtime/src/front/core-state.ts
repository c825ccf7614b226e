/** How long the core's event loop may go without a tick before /healthz says it is stuck. */
export const CORE_STALL_MS = 30_000;

/** How old the core's last readiness report may be before /readyz stops trusting it. */
export const READINESS_REPORT_MAX_AGE_MS = 10_000;

export type Verdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * What the front knows of the core (the main thread), kept so that health and readiness are
 * answered at once however busy the core is: its event loop's heartbeat (shared memory, read
 * live), its gRPC serving status and its latest readiness check (reported by message). A core
 * busy with a long synchronous step is alive; one whose loop has not turned for
 * `CORE_STALL_MS` is not, so a supervisor can restart a process that hangs for good.
 */
export class CoreState {
  private serving = false;
  private lastReport: { readonly ready: boolean; readonly reason?: string; readonly atMs: number } | undefined;

  constructor(
    private readonly heartbeat: { sinceLastTickMs(): number },
    private readonly bounds = { stallMs: CORE_STALL_MS, readinessMaxAgeMs: READINESS_REPORT_MAX_AGE_MS },
    private readonly now: () => number = () => performance.now(),
  ) {}

  setServing(serving: boolean): void {
    this.serving = serving;
  }

  reportReadiness(ready: boolean, reason?: string): void {
    this.lastReport = { ready, reason, atMs: this.now() };
  }

  /** /healthz: the core's event loop still turns. */
  liveness(): Verdict {
    const since = this.heartbeat.sinceLastTickMs();
    if (since <= this.bounds.stallMs) return { ok: true };
    return { ok: false, reason: Number.isFinite(since) ? `the main thread has not turned its event loop for ${Math.round(since)} ms` : 'the main thread has not started' };
  }

  /** /readyz: alive, and its latest readiness check, recent enough, passed. */
  readiness(): Verdict {
    const live = this.liveness();
    if (!live.ok) return live;
    const last = this.lastReport;
    if (last === undefined) return { ok: false, reason: 'no readiness check has completed yet' };
    const age = this.now() - last.atMs;
    if (age > this.bounds.readinessMaxAgeMs) return { ok: false, reason: `the last readiness check completed ${Math.round(age)} ms ago` };
    return last.ready ? { ok: true } : { ok: false, reason: last.reason ?? 'a dependency does not answer' };
  }

  /** The gRPC health service's overall status. */
  grpcServing(): boolean {
    return this.serving && this.liveness().ok;
  }
}
