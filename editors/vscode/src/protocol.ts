// The node's LSP custom surface (docs/internal-api.md, "LSP custom surface") and the messages
// exchanged between the extension host and the chat webview. No `vscode` import: shared by the
// webview bundle and the tests.

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }

/** `contenox/chat` request params. */
export interface ChatParams { chatId: string; prompt: string; uri?: string; range?: Range }

export interface ExplainSegment {
  kind: string;
  tokens: number;
  cached: number;
  new: number;
  invalidated_by: string | null;
}

export interface ExplainTotals { tokens: number; cached: number; new: number; hit_pct: number }

/** The Explain JSON: hover, `contenox/explainContext`, chat results. */
export interface Explain {
  workspace: string;
  turn: number;
  model: string;
  segments: ExplainSegment[];
  totals: ExplainTotals;
  predicted_cached_tokens?: number;
  measured_recomputed_tokens?: number;
  ttft_ms?: number | null;
  context_size?: number;
}

/** `contenox/chat` result (also what the chat-like workspace commands return). */
export interface ChatResult { text: string; explain: Explain | null }

/** `$/contenox/chatChunk` notification params. */
export interface ChatChunk { chatId: string; text: string }

export type NodeState = 'idle' | 'queued' | 'indexing' | 'prefill' | 'decode' | 'error';

/** `$/contenox/cacheStatus` notification params. */
export interface CacheStatus {
  workspace: string;
  cachedTokens: number;
  newTokens: number;
  promptTokens: number;
  hitPct: number | null;
  ttftMs: number | null;
  state: NodeState;
  /** Optional human-readable detail for the error state. */
  message?: string;
}

export const Methods = {
  chat: 'contenox/chat',
  chatChunk: '$/contenox/chatChunk',
  cacheStatus: '$/contenox/cacheStatus',
  explainContext: 'contenox/explainContext',
} as const;

export const ServerCommands = {
  explainSelection: 'contenox.explainSelection',
  findRelated: 'contenox.findRelated',
  askSelection: 'contenox.askSelection',
  pin: 'contenox.pin',
  unpin: 'contenox.unpin',
} as const;

/** Server commands whose result is shown in the chat panel. */
export const CHAT_COMMANDS: ReadonlySet<string> = new Set([
  ServerCommands.explainSelection,
  ServerCommands.findRelated,
  ServerCommands.askSelection,
]);

// -- extension host <-> webview -------------------------------------------------------------

export type ToWebview =
  | { type: 'start'; chatId: string; prompt: string }
  | { type: 'chunk'; chatId: string; text: string }
  | { type: 'done'; chatId: string; text: string; explain: Explain | null }
  | { type: 'cancelled'; chatId: string }
  | { type: 'error'; chatId?: string; message: string }
  | { type: 'explain'; explain: Explain | null };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; prompt: string }
  | { type: 'stop'; chatId: string };

export function isFromWebview(value: unknown): value is FromWebview {
  if (typeof value !== 'object' || value === null) return false;
  const msg = value as Record<string, unknown>;
  switch (msg.type) {
    case 'ready':
      return true;
    case 'send':
      return typeof msg.prompt === 'string';
    case 'stop':
      return typeof msg.chatId === 'string';
    default:
      return false;
  }
}

export function isToWebview(value: unknown): value is ToWebview {
  if (typeof value !== 'object' || value === null) return false;
  const msg = value as Record<string, unknown>;
  switch (msg.type) {
    case 'start':
      return typeof msg.chatId === 'string' && typeof msg.prompt === 'string';
    case 'chunk':
      return typeof msg.chatId === 'string' && typeof msg.text === 'string';
    case 'done':
      return typeof msg.chatId === 'string' && typeof msg.text === 'string';
    case 'cancelled':
      return typeof msg.chatId === 'string';
    case 'error':
      return typeof msg.message === 'string';
    case 'explain':
      return true;
    default:
      return false;
  }
}
