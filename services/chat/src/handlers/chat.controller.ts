import { Controller, Inject } from '@nestjs/common';
import type { Metadata } from '@grpc/grpc-js';
import { from } from 'rxjs';
import type { Observable } from 'rxjs';
import { v1 } from '@trellis/contracts';
import { TENANT_RESOLVER, TenantResolver } from '@trellis/grpc-edge';
import { ChatEngine } from '../chat-engine';

/** gRPC edge of chat: a server stream of events, or the answer at once. */
@Controller()
@v1.ChatServiceControllerMethods()
export class ChatController implements v1.ChatServiceController {
  constructor(
    @Inject(ChatEngine) private readonly engine: ChatEngine,
    @Inject(TENANT_RESOLVER) private readonly tenants: TenantResolver,
  ) {}

  chat(request: v1.ChatRequest, metadata?: Metadata): Observable<v1.ChatEvent> {
    return from(this.engine.chat(this.tenants.resolve(metadata), request));
  }

  ask(request: v1.ChatRequest, metadata?: Metadata): Promise<v1.Answer> {
    return this.engine.ask(this.tenants.resolve(metadata), request);
  }
}
