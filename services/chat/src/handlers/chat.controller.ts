import { Controller, Inject } from '@nestjs/common';
import type { Metadata } from '@grpc/grpc-js';
import { from } from 'rxjs';
import type { Observable } from 'rxjs';
import { v1 } from '@trellis/contracts';
import { TENANT_RESOLVER, TenantResolver } from '@trellis/grpc-edge';
import { ChatEngine } from '../chat-engine';
import { Conversations } from '../conversation/conversations';
import { ChatEngineCatalog } from '../engines/chat-engine-catalog';

/** gRPC edge of chat: a server stream of events, or the answer at once; saved conversations; chat engines. */
@Controller()
@v1.ChatServiceControllerMethods()
export class ChatController implements v1.ChatServiceController {
  constructor(
    @Inject(ChatEngine) private readonly engine: ChatEngine,
    @Inject(Conversations) private readonly conversations: Conversations,
    @Inject(ChatEngineCatalog) private readonly engines: ChatEngineCatalog,
    @Inject(TENANT_RESOLVER) private readonly tenants: TenantResolver,
  ) {}

  chat(request: v1.ChatRequest, metadata?: Metadata): Observable<v1.ChatEvent> {
    return from(this.engine.chat(this.tenants.resolve(metadata), request));
  }

  ask(request: v1.ChatRequest, metadata?: Metadata): Promise<v1.Answer> {
    return this.engine.ask(this.tenants.resolve(metadata), request);
  }

  listChats(request: v1.ListChatsRequest, metadata?: Metadata): Promise<v1.ListChatsResponse> {
    return this.conversations.list(this.tenants.resolve(metadata), request);
  }

  getChat(request: v1.GetChatRequest, metadata?: Metadata): Promise<v1.ChatDetail> {
    return this.conversations.get(this.tenants.resolve(metadata), request.chatId);
  }

  deleteChat(request: v1.DeleteChatRequest, metadata?: Metadata): Promise<v1.DeleteChatResponse> {
    return this.conversations.delete(this.tenants.resolve(metadata), request.chatId);
  }

  createChatEngine(request: v1.CreateChatEngineRequest, metadata?: Metadata): Promise<v1.ChatEngine> {
    return this.engines.create(this.tenants.resolve(metadata), request.engine);
  }

  getChatEngine(request: v1.GetChatEngineRequest, metadata?: Metadata): Promise<v1.ChatEngine> {
    return this.engines.get(this.tenants.resolve(metadata), request.name);
  }

  listChatEngines(_request: v1.ListChatEnginesRequest, metadata?: Metadata): Promise<v1.ListChatEnginesResponse> {
    return this.engines.list(this.tenants.resolve(metadata));
  }

  updateChatEngine(request: v1.UpdateChatEngineRequest, metadata?: Metadata): Promise<v1.ChatEngine> {
    return this.engines.update(this.tenants.resolve(metadata), request.name, request.engine);
  }

  deleteChatEngine(request: v1.DeleteChatEngineRequest, metadata?: Metadata): Promise<v1.DeleteChatEngineResponse> {
    return this.engines.delete(this.tenants.resolve(metadata), request.name);
  }
}
