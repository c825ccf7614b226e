import type { KbScope } from '@trellis/contracts';
import type { ChatTurn } from '../records';

/** Chat history: questions and answers with their citations. */
export interface ChatRepository {
  saveChatTurn(scope: KbScope, turn: ChatTurn): Promise<void>;
}
