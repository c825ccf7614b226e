import { describe, it } from 'vitest';

/** What a suite needs of the real infrastructure `npm test` starts. */
export interface InfraNeeds {
  readonly kafka?: boolean;
  readonly mysql?: boolean;
}

/**
 * `describe` for tests that run against the real broker or SQL server: when the variables that
 * point at them are missing, the suite fails and says which, instead of being skipped unseen.
 */
export function describeWithInfra(name: string, needs: InfraNeeds, body: () => void): void {
  const missing = [
    needs.kafka && !process.env.TRELLIS_TEST_KAFKA_BROKERS ? 'TRELLIS_TEST_KAFKA_BROKERS' : undefined,
    needs.mysql && !process.env.TRELLIS_TEST_MYSQL_URL ? 'TRELLIS_TEST_MYSQL_URL' : undefined,
  ].filter((variable) => variable !== undefined);
  if (missing.length === 0) {
    describe(name, body);
    return;
  }
  describe(name, () => {
    it(`needs ${missing.join(' and ')}`, () => {
      throw new Error(`set ${missing.join(' and ')} (npm test starts Kafka and MariaDB and sets them): a test that cannot run fails, it does not skip`);
    });
  });
}
