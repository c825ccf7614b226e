import { describe, expect, it } from 'vitest';
import { MIN_CALIBRATION_CALLS, inputScaleOf, outputRatioOf, summaryRateOf } from './estimate-calibration';

const spend = (calls: number, inputTokens: number, outputTokens: number, countedInputTokens = 0) => ({ calls, inputTokens, outputTokens, estimatedCostUsd: 0, countedInputTokens });

describe('estimate calibration', () => {
  it('uses the server default until the knowledge base made enough extraction calls, then its own output ratio', () => {
    expect(outputRatioOf(spend(MIN_CALIBRATION_CALLS - 1, 1000, 5000), 60)).toMatchObject({ outputPerInput: 0.6, basis: expect.stringContaining('TRELLIS_ESTIMATE_OUTPUT_PERCENT=60') });
    expect(outputRatioOf(spend(MIN_CALIBRATION_CALLS, 1000, 2500), 60)).toMatchObject({ outputPerInput: 2.5, basis: expect.stringContaining(`${MIN_CALIBRATION_CALLS} extraction calls: 2.50`) });
  });

  it("scales prompts by how the provider counted the knowledge base's past prompts, once there are enough", () => {
    expect(inputScaleOf(spend(5, 1100, 0, 1000))).toBe(1);
    expect(inputScaleOf(spend(40, 1100, 0, 1000))).toBeCloseTo(1.1, 9);
    // Calls recorded before prompts were counted: no scale rather than a wrong one.
    expect(inputScaleOf(spend(40, 1100, 0, 0))).toBe(1);
  });

  it('takes summaries per extraction call from the knowledge base once it has enough calls', () => {
    expect(summaryRateOf(spend(3, 0, 0), spend(0, 0, 0)).callsPerExtraction).toBeCloseTo(0.064, 9);
    expect(summaryRateOf(spend(100, 0, 0), spend(25, 5000, 1000))).toEqual({ callsPerExtraction: 0.25, inputPerExtraction: 50, outputPerExtraction: 10 });
  });
});
