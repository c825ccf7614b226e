import { logLevel } from 'kafkajs';
import { describe, expect, it, vi } from 'vitest';
import { routeLogsTo } from './kafka-client';

describe('kafkajs log routing', () => {
  const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const log = routeLogsTo(logger)(logLevel.WARN);
  const entry = (namespace: string, level: logLevel, fields: object = {}) => ({
    namespace,
    level,
    label: '',
    log: { timestamp: 'now', logger: 'kafkajs', message: 'm', ...fields },
  });

  it('keeps kafkajs errors as errors, without its timestamp, naming the kafkajs component', () => {
    log(entry('Consumer', logLevel.ERROR, { groupId: 'g' }));
    expect(logger.error).toHaveBeenCalledWith({ groupId: 'g', kafkajs: 'Consumer' }, 'm');
  });

  it('logs failed tries kafkajs is about to retry as warnings', () => {
    log(entry('Connection', logLevel.ERROR));
    log(entry('Producer', logLevel.ERROR, { retryCount: 0 }));
    log(entry('Runner', logLevel.WARN));
    expect(logger.warn).toHaveBeenCalledTimes(3);
    expect(logger.error).toHaveBeenCalledTimes(1);
  });
});
