import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { createConnection } from 'mysql2/promise';
import { freePort, waitFor } from './free-port';

export const SERVICES = ['ingestion', 'chunking', 'extraction', 'graph-store', 'retrieval', 'chat'] as const;
export type ServiceName = (typeof SERVICES)[number];

const ROOT = resolve(__dirname, '../../..');
const CLI = resolve(ROOT, 'services/standalone/bin/trellis.js');

export interface ServiceProcess {
  readonly name: ServiceName;
  readonly grpcPort: number;
  readonly httpPort: number;
  child: ChildProcess;
  log: string;
}

/**
 * The six services as separate processes against real Kafka and a real MySQL-protocol
 * database, each run of it isolated by its own topic prefix and database.
 */
export class DistributedDeployment {
  readonly processes = new Map<ServiceName, ServiceProcess>();
  /** Extra instances of a service (same consumer group), e.g. a second extraction worker. */
  readonly replicas: ServiceProcess[] = [];
  readonly env: Record<string, string>;
  private readonly serverUrl: string;
  private readonly database: string;
  private readonly topicPrefix: string;
  private readonly kafkaBrokers: string[];

  constructor(options: { kafkaBrokers: string; mysqlUrl: string; runId: string; extraEnv?: Record<string, string> }) {
    this.serverUrl = options.mysqlUrl.endsWith('/') ? options.mysqlUrl : `${options.mysqlUrl}/`;
    this.database = `trellis_e2e_${options.runId}`;
    this.topicPrefix = `e2e-${options.runId}.`;
    this.kafkaBrokers = options.kafkaBrokers.split(',');
    this.env = {
      PATH: process.env.PATH ?? '',
      TRELLIS_MODE: 'distributed',
      KAFKA_BROKERS: options.kafkaBrokers,
      TRELLIS_DB_URL: `${this.serverUrl}${this.database}`,
      TRELLIS_KAFKA_TOPIC_PREFIX: this.topicPrefix,
      TRELLIS_KAFKA_PARTITIONS: '4',
      TRELLIS_INTERNAL_TOKEN: `internal-token-of-run-${options.runId}`,
      TRELLIS_LOG_LEVEL: 'warn',
      ...options.extraEnv,
    };
  }

  /** Migrations and topics, as the Helm hooks do. */
  prepare(): void {
    execFileSync(process.execPath, [CLI, 'migrate'], { env: this.env, stdio: 'pipe' });
    execFileSync(process.execPath, [CLI, 'topics', 'ensure'], { env: this.env, stdio: 'pipe' });
  }

  async startAll(): Promise<void> {
    for (const name of SERVICES) await this.start(name);
  }

  async start(name: ServiceName): Promise<ServiceProcess> {
    const service = await this.spawnService(name, this.processes.get(name));
    this.processes.set(name, service);
    return service;
  }

  /** One more process of a service, sharing its consumer group. */
  async startReplica(name: ServiceName): Promise<ServiceProcess> {
    const service = await this.spawnService(name, undefined);
    this.replicas.push(service);
    return service;
  }

  private async spawnService(name: ServiceName, existing: ServiceProcess | undefined): Promise<ServiceProcess> {
    const grpcPort = existing?.grpcPort ?? (await freePort());
    const httpPort = existing?.httpPort ?? (await freePort());
    const retrieval = this.processes.get('retrieval');
    const child = spawn(process.execPath, [resolve(ROOT, `services/${name}/dist/main.js`)], {
      cwd: ROOT,
      env: {
        ...this.env,
        TRELLIS_GRPC_PORT: String(grpcPort),
        TRELLIS_HTTP_PORT: String(httpPort),
        TRELLIS_RETRIEVAL_ADDRESS: retrieval ? `127.0.0.1:${retrieval.grpcPort}` : '127.0.0.1:1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service: ServiceProcess = { name, grpcPort, httpPort, child, log: existing?.log ?? '' };
    child.stdout?.on('data', (d: Buffer) => (service.log += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (service.log += d.toString()));
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${service.log}`);
        return (await fetch(`http://127.0.0.1:${httpPort}/readyz`).catch(() => null))?.ok;
      },
      60_000,
      `${name} to be ready`,
    );
    return service;
  }

  /** `kill -9`: no shutdown hooks, nothing committed that was in flight. */
  async kill(name: ServiceName): Promise<void> {
    const service = this.processes.get(name);
    // A process killed by a signal keeps exitCode null: its signalCode says it is gone.
    if (!service || service.child.exitCode !== null || service.child.signalCode !== null) return;
    const exited = new Promise((r) => service.child.once('exit', r));
    service.child.kill('SIGKILL');
    await exited;
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.processes.values(), ...this.replicas].map(async (service) => {
        if (service.child.exitCode !== null || service.child.signalCode !== null) return;
        const exited = new Promise((r) => service.child.once('exit', r));
        service.child.kill('SIGTERM');
        const timer = setTimeout(() => service.child.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  /**
   * Stops every process, then deletes the run's topics and drops its database: a broker
   * shared by many runs would otherwise keep thousands of partitions, and load every one of
   * them at its next start.
   */
  async tearDown(): Promise<void> {
    await this.stopAll();
    const admin = new Kafka({ brokers: this.kafkaBrokers, clientId: 'trellis-e2e-cleanup', logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(this.topicPrefix));
      if (topics.length > 0) await admin.deleteTopics({ topics });
    } finally {
      await admin.disconnect();
    }
    const connection = await createConnection(this.serverUrl);
    try {
      await connection.query(`DROP DATABASE IF EXISTS \`${this.database}\``);
    } finally {
      await connection.end();
    }
  }

  /** Client addresses of the four gRPC APIs. */
  addresses(): { knowledgeBases: string; graph: string; retrieval: string; chat: string } {
    const at = (name: ServiceName) => `127.0.0.1:${this.processes.get(name)!.grpcPort}`;
    return { knowledgeBases: at('ingestion'), graph: at('graph-store'), retrieval: at('retrieval'), chat: at('chat') };
  }

  logs(): string {
    return [...this.processes.values()].map((s) => `--- ${s.name}\n${s.log.slice(-4000)}`).join('\n');
  }

  /** Each service's last `limit` log lines at warn level or above (pino's JSON, level 40+): what a failed drill prints. */
  warnings(limit = 40): string {
    const warning = (line: string) => /"level":\s*(4|5|6)0\b/.test(line);
    return [...this.processes.values(), ...this.replicas].map((s) => `--- ${s.name}\n${s.log.split('\n').filter(warning).slice(-limit).join('\n')}`).join('\n');
  }
}
