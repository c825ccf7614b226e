import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { TenantScope } from '@trellis/contracts';
import type { ChatEngineRecord, ChatEngineSettings } from '../records';
import type { ChatEngineRepository } from '../repositories/chat-engine.repository';
import { json, rowMapper, text, time } from '../row-mappers';
import { SqlRepository } from './sql-engine';

/** Chat engines of a tenant, keyed by name; the settings are one JSON document. */
export class SqlChatEngines extends SqlRepository implements ChatEngineRepository {
  async createChatEngine(scope: TenantScope, engine: { name: string; description: string; settings: ChatEngineSettings }): Promise<ChatEngineRecord> {
    const now = new Date().toISOString();
    const at = this.dialect.time(now);
    try {
      await this.db.exec('INSERT INTO chat_engines (tenant_id, name, description, settings, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [
        scope.tenantId,
        engine.name,
        engine.description,
        JSON.stringify(engine.settings),
        at,
        at,
      ]);
    } catch (error) {
      if (this.dialect.isDuplicateKey(error)) throw new TrellisError(ErrorCode.AlreadyExists, `chat engine "${engine.name}" already exists`);
      throw error;
    }
    return { ...engine, createdAt: now, updatedAt: now };
  }

  async getChatEngine(scope: TenantScope, name: string): Promise<ChatEngineRecord | null> {
    const [row] = await this.db.rows('SELECT name, description, settings, created_at, updated_at FROM chat_engines WHERE tenant_id = ? AND name = ?', [scope.tenantId, name]);
    return row ? toChatEngine(row) : null;
  }

  async listChatEngines(scope: TenantScope): Promise<ChatEngineRecord[]> {
    const rows = await this.db.rows('SELECT name, description, settings, created_at, updated_at FROM chat_engines WHERE tenant_id = ? ORDER BY name', [scope.tenantId]);
    return rows.map(toChatEngine);
  }

  async updateChatEngine(scope: TenantScope, name: string, changes: { description: string; settings: ChatEngineSettings }): Promise<ChatEngineRecord | null> {
    await this.db.exec('UPDATE chat_engines SET description = ?, settings = ?, updated_at = ? WHERE tenant_id = ? AND name = ?', [
      changes.description,
      JSON.stringify(changes.settings),
      this.dialect.time(new Date().toISOString()),
      scope.tenantId,
      name,
    ]);
    return this.getChatEngine(scope, name);
  }

  async deleteChatEngine(scope: TenantScope, name: string): Promise<boolean> {
    return (await this.db.exec('DELETE FROM chat_engines WHERE tenant_id = ? AND name = ?', [scope.tenantId, name])) > 0;
  }
}

const toChatEngine = rowMapper<ChatEngineRecord>({ name: text, description: text, settings: json<ChatEngineSettings>(), createdAt: time, updatedAt: time });
