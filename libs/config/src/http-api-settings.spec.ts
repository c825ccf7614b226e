import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config';

describe('HTTP API settings', () => {
  it('serve the API beside the probes, over the own gRPC port, by default', () => {
    expect(loadConfig({}, 't').httpApi).toEqual({ enabled: true, grpcAddress: undefined, addresses: {}, timeoutMs: 120_000, progressPollMs: 500, console: true });
  });

  it('read a port of its own, upstream addresses and the poll interval', () => {
    const env = { TRELLIS_HTTP_API_PORT: '8081', TRELLIS_HTTP_API_GRPC_ADDRESS: 'gateway:443', TRELLIS_HTTP_API_CHAT_ADDRESS: 'chat:50051', TRELLIS_HTTP_API_PROGRESS_POLL_MS: '250', TRELLIS_HTTP_API: 'false', TRELLIS_CONSOLE: 'false', TRELLIS_CONSOLE_DIR: '/srv/console' };
    expect(loadConfig(env, 't').httpApi).toEqual({ enabled: false, port: 8081, grpcAddress: 'gateway:443', addresses: { chat: 'chat:50051' }, timeoutMs: 120_000, progressPollMs: 250, console: false, consoleDir: '/srv/console' });
  });

  it('list every bad setting', () => {
    try {
      loadConfig({ TRELLIS_HTTP_API_PORT: 'x', TRELLIS_HTTP_API_GRAPH_ADDRESS: 'no-port', TRELLIS_HTTP_API: 'yes' }, 't');
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).problems).toEqual(
        expect.arrayContaining([expect.stringMatching(/^TRELLIS_HTTP_API_PORT/), expect.stringMatching(/^TRELLIS_HTTP_API_GRAPH_ADDRESS must be host:port/), expect.stringMatching(/^TRELLIS_HTTP_API must be/)]),
      );
    }
  });
});
