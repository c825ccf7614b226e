import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { events } from '@trellis/contracts';
import { Kafka, logLevel } from 'kafkajs';
import { describe, it } from 'vitest';
import type { KafkaBusConfig, KafkaBusLogger, KafkaConsumerTimings } from '../src/kafka';

export const TEST_BROKERS = (process.env.TRELLIS_TEST_KAFKA_BROKERS ?? '').split(',').filter((b) => b !== '');

/**
 * Timings that keep the suite fast: short fetch waits make stops quick, and a dead member is
 * noticed after 6 s, the broker's smallest allowed session timeout.
 */
export const FAST_CONSUMER: Required<KafkaConsumerTimings> = {
  sessionTimeoutMs: 6_000,
  heartbeatIntervalMs: 500,
  rebalanceTimeoutMs: 10_000,
  maxWaitTimeMs: 200,
};

const usedPrefixes: string[] = [];

/** Topics and groups of their own for each test, so runs never see each other's events. */
export function uniquePrefix(test: string): string {
  const prefix = `test.${test}.${randomUUID().slice(0, 8)}.`;
  usedPrefixes.push(prefix);
  return prefix;
}

/** Deletes the topics and groups of every prefix handed out, so that test runs do not pile up on a shared broker. */
export async function deleteTestTopicsAndGroups(): Promise<void> {
  const admin = new Kafka({ brokers: TEST_BROKERS, clientId: 'trellis-test-cleanup', logLevel: logLevel.NOTHING }).admin();
  const ours = (name: string) => usedPrefixes.some((prefix) => name.startsWith(prefix));
  await admin.connect();
  try {
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter(ours);
    if (groups.length > 0) await admin.deleteGroups(groups);
    const topics = (await admin.listTopics()).filter(ours);
    if (topics.length > 0) await admin.deleteTopics({ topics });
  } finally {
    await admin.disconnect();
  }
}

export class RecordingLogger implements KafkaBusLogger {
  readonly entries: Array<{ level: 'info' | 'warn' | 'error'; msg: string; obj: object }> = [];

  info(obj: object, msg: string): void {
    this.record('info', obj, msg);
  }

  warn(obj: object, msg: string): void {
    this.record('warn', obj, msg);
  }

  error(obj: object, msg: string): void {
    this.record('error', obj, msg);
  }

  private record(level: 'info' | 'warn' | 'error', obj: object, msg: string): void {
    this.entries.push({ level, msg, obj });
    if (process.env.TRELLIS_TEST_LOG) console.log(level, msg, JSON.stringify(obj));
  }
}

export function testBusConfig(topicPrefix: string, overrides: Partial<KafkaBusConfig> = {}): KafkaBusConfig {
  return {
    brokers: TEST_BROKERS,
    clientId: 'trellis-messaging-test',
    topicPrefix,
    consumer: FAST_CONSUMER,
    retry: { baseDelayMs: 50, maxDelayMs: 500 },
    logger: new RecordingLogger(),
    ...overrides,
  };
}

/** A `document.ingested` payload; the test's label for the event rides in `contentHash`. */
export function ingested(documentId: string, label: string): events.DocumentIngested {
  return {
    context: { tenantId: 't-1', knowledgeBaseId: 'kb-1', documentId, documentVersion: 1, traceparent: '', knowledgeBase: undefined },
    contentHash: label,
  };
}

export interface CrashingConsumerArgs {
  readonly brokers: readonly string[];
  readonly topicPrefix: string;
  readonly group: string;
  /** Label of the event whose handler never finishes: the one in flight when the process is killed. */
  readonly stuckOn: string;
  readonly consumer: KafkaConsumerTimings;
}

const ROOT = resolve(__dirname, '../../..');

/** Runs test/fixtures/crashing-consumer.ts from source (tsx) in a child process with an IPC channel. */
export function spawnCrashingConsumer(args: CrashingConsumerArgs): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', resolve(__dirname, 'fixtures/crashing-consumer.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      // Resolves @trellis/contracts to its sources, as vitest does, rather than to a build that may be stale.
      TSX_TSCONFIG_PATH: resolve(__dirname, 'fixtures/tsx.tsconfig.json'),
      CRASHING_CONSUMER_ARGS: JSON.stringify(args),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/**
 * `describe` for suites on the broker of TRELLIS_TEST_KAFKA_BROKERS: without it the suite fails
 * and says so (npm test starts Kafka and sets it), instead of being skipped unseen.
 */
export function describeOnBroker(name: string, body: () => void): void {
  if (TEST_BROKERS.length > 0) {
    describe(name, body);
    return;
  }
  describe(name, () => {
    it('needs TRELLIS_TEST_KAFKA_BROKERS', () => {
      throw new Error('set TRELLIS_TEST_KAFKA_BROKERS=127.0.0.1:9092 (npm test starts Kafka and sets it): a test that cannot run fails');
    });
  });
}
