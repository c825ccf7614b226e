import { Global, Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { TENANT_RESOLVER, TenantResolver } from '@trellis/grpc-edge';
import { EVENT_BUS, EVENT_OUTBOX } from '@trellis/messaging';
import { MODELS } from '@trellis/models';
import { LLM_PRICES, LOGGER, METRICS } from '@trellis/observability';
import { REPOSITORY_TOKENS } from './repository-tokens';
import type { TrellisRepositories } from '@trellis/storage';
import type { Runtime } from './runtime';
import { STORE_AVAILABILITY } from './store-availability';

export const CONFIG = Symbol.for('trellis.config');

/**
 * Makes the runtime's infrastructure injectable in every service module: each repository under
 * its own token, so a module asks for exactly the repositories its services use.
 */
@Global()
@Module({})
export class RuntimeModule {
  static forRuntime(runtime: Runtime): DynamicModule {
    const providers = [
      { provide: CONFIG, useValue: runtime.config },
      { provide: LOGGER, useValue: runtime.logger },
      { provide: METRICS, useValue: runtime.metrics },
      { provide: LLM_PRICES, useValue: runtime.telemetry.llmPrices },
      { provide: EVENT_BUS, useValue: runtime.bus },
      { provide: EVENT_OUTBOX, useValue: runtime.outbox },
      { provide: MODELS, useValue: runtime.models },
      { provide: STORE_AVAILABILITY, useValue: runtime.availability },
      { provide: TENANT_RESOLVER, useValue: new TenantResolver(runtime.config.apiKeys, runtime.config.internalToken) },
      ...(Object.keys(REPOSITORY_TOKENS) as Array<keyof TrellisRepositories>).map((name) => ({ provide: REPOSITORY_TOKENS[name], useValue: runtime.repositories[name] })),
    ];
    return { module: RuntimeModule, providers, exports: providers.map((p) => p.provide) };
  }
}
