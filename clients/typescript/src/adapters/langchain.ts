// LangChain chat message history (@langchain/core, an optional peer dependency): a sessiongraph
// session as BaseListChatMessageHistory. Import it from '@sessiongraph/client/langchain'.
// docs/adapters.md says what it maps and what it cannot.
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';

import type { SessionGraphClient } from '../client.js';
import type { ContextOptions } from '../generated/graphql.js';
import { appendMessages, type ChatMessage } from './chat.js';

const ROLES: Record<string, ChatMessage['role']> = { human: 'user', ai: 'assistant', system: 'system' };

/** { role, text } for human, AI and system messages with text; tool messages and tool calls are left out. */
export function toMessages(messages: BaseMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    const role = ROLES[m.getType()];
    const text = typeof m.content === 'string' ? m.content : m.text;
    if (role && text) out.push({ role, text });
  }
  return out;
}

function toLangChain(role: string, content: string): BaseMessage {
  if (role === 'user') return new HumanMessage(content);
  if (role === 'assistant') return new AIMessage(content);
  return new SystemMessage(content);
}

/**
 * BaseListChatMessageHistory over one sessiongraph session. getMessages is the session's MESSAGES
 * context build, so it is what the model should see: over the budget, the oldest turns are cut
 * (SLIDING_WINDOW, with a note) or replaced by the history summary (SUMMARY), as options say.
 * addMessages writes turns (a human message begins one, the AI's answer ends it); clear resets
 * the conversation.
 */
export class SessionGraphChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['sessiongraph', 'langchain'];

  constructor(
    readonly client: SessionGraphClient,
    readonly sessionID: string,
    /** The MESSAGES build's options: modelLimit, strategy, keepRecent, tokenizer. */
    readonly options?: ContextOptions,
  ) {
    super();
  }

  async getMessages(): Promise<BaseMessage[]> {
    const build = await this.client.context(this.sessionID, 'MESSAGES', this.options);
    return build.messages.map((m) => toLangChain(m.role, m.content));
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  async addMessages(messages: BaseMessage[]): Promise<void> {
    await appendMessages(this.client, this.sessionID, toMessages(messages));
  }

  async clear(): Promise<void> {
    await this.client.resetConversation({ sessionID: this.sessionID });
  }
}
