import { describe, expect, it } from 'vitest';
import { CoreState } from './core-state';

function state(sinceLastTickMs: number) {
  const heartbeat = { sinceLastTickMs: () => sinceLastTickMs };
  let now = 0;
  const core = new CoreState(heartbeat, { stallMs: 1_000, readinessMaxAgeMs: 500 }, () => now);
  return { core, heartbeat, advance: (ms: number) => (now += ms), setTick: (ms: number) => (sinceLastTickMs = ms) };
}

describe('CoreState', () => {
  it('is live while the core loop ticks, however long ago its last readiness report, and not live once it stalls', () => {
    const { core, setTick } = state(900);
    expect(core.liveness()).toEqual({ ok: true });
    setTick(1_500);
    expect(core.liveness()).toEqual({ ok: false, reason: 'the main thread has not turned its event loop for 1500 ms' });
    setTick(Infinity);
    expect(core.liveness()).toEqual({ ok: false, reason: 'the main thread has not started' });
  });

  it("is ready on the core's latest passing check while it is recent, and says why otherwise", () => {
    const { core, advance } = state(5);
    expect(core.readiness()).toEqual({ ok: false, reason: 'no readiness check has completed yet' });
    core.reportReadiness(true);
    expect(core.readiness()).toEqual({ ok: true });
    advance(600);
    expect(core.readiness()).toEqual({ ok: false, reason: 'the last readiness check completed 600 ms ago' });
    core.reportReadiness(false, 'database ping timed out after 2000 ms');
    expect(core.readiness()).toEqual({ ok: false, reason: 'database ping timed out after 2000 ms' });
  });

  it('serves gRPC health only once the core says so and while it is live', () => {
    const { core, setTick } = state(5);
    expect(core.grpcServing()).toBe(false);
    core.setServing(true);
    expect(core.grpcServing()).toBe(true);
    setTick(5_000);
    expect(core.grpcServing()).toBe(false);
  });
});
