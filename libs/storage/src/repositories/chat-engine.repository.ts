import type { TenantScope } from '@trellis/contracts';
import type { ChatEngineRecord, ChatEngineSettings } from '../records';

/** Chat engines: named chat configurations, unique per tenant. */
export interface ChatEngineRepository {
  /** ALREADY_EXISTS when the tenant has an engine of that name. */
  createChatEngine(scope: TenantScope, engine: { name: string; description: string; settings: ChatEngineSettings }): Promise<ChatEngineRecord>;
  getChatEngine(scope: TenantScope, name: string): Promise<ChatEngineRecord | null>;
  /** By name. */
  listChatEngines(scope: TenantScope): Promise<ChatEngineRecord[]>;
  /** Null when there is none of that name. */
  updateChatEngine(scope: TenantScope, name: string, changes: { description: string; settings: ChatEngineSettings }): Promise<ChatEngineRecord | null>;
  deleteChatEngine(scope: TenantScope, name: string): Promise<boolean>;
}
