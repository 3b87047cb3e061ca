// The node's LSP custom surface (docs/internal-api.md, "LSP custom surface") and the messages
// exchanged between the extension host and the chat webview. No `vscode` import: shared by the
// webview bundle and the tests.

export interface Position { line: number; character: number }
export interface Range { start: Position; end: Position }

/** `contenox/chat` request params. */
export interface ChatParams { chatId: string; prompt: string; uri?: string; range?: Range; thread?: string }

/** The prompt's segments, in prompt order (server/planner/segments.py SEGMENT_KINDS). */
export const SEGMENT_KINDS = [
  'system', 'tools', 'policy', 'instructions', 'repo_map', 'pins', 'history', 'map_delta', 'diff', 'terminal',
  'retrieved', 'user',
] as const;
export type SegmentKind = (typeof SEGMENT_KINDS)[number];

export interface ExplainSegment {
  /** One of SEGMENT_KINDS (a string: a newer node may add kinds). */
  kind: string;
  tokens: number;
  cached: number;
  new: number;
  invalidated_by: string | null;
}

export interface ExplainTotals { tokens: number; cached: number; new: number; hit_pct: number }

/** One retrieved chunk: `new` = entered into the thread by this turn, `in thread` = by an earlier one (cached). */
export interface RetrievedChunk {
  /** `path:start-end` (workspace-relative path, 1-based lines). */
  id: string;
  name: string;
  tokens: number;
  status: 'new' | 'in thread';
  /** Why it was chosen: "defines Signer.unsign (mentioned)", "BM25 rank 2", "caller of sign", ... */
  reasons: string[];
}

/** What an answer cites, checked against the workspace; `*_unknown` are names it does not have. */
export interface Citations {
  files_real: string[];
  files_unknown: string[];
  symbols_real: string[];
  symbols_unknown: string[];
  /** `path:line` references past the end of their file. */
  lines_unknown: string[];
}

/** The Explain JSON: hover, `contenox/explainContext`, chat results. */
export interface Explain {
  workspace: string;
  turn: number;
  model: string;
  segments: ExplainSegment[];
  totals: ExplainTotals;
  predicted_cached_tokens?: number;
  measured_recomputed_tokens?: number | null;
  ttft_ms?: number | null;
  context_size?: number;
  /** Every budget/layout decision of the turn, in words. */
  notes: string[];
  /** The code retrieved for the question, best first. */
  retrieved: RetrievedChunk[];
  /** Null before an answer exists. */
  citations: Citations | null;
  /** The part of the retrieved code prefilled before the question at the user's place (absent: none was). */
  anticipated?: Anticipated | null;
}

/** Explain's `anticipated`: how much of the retrieved code was anticipated at the user's place, and cached. */
export interface Anticipated {
  place: string;
  state: string;
  retrieved_tokens: number;
  anticipated_tokens: number;
  cached_tokens: number;
  new_tokens: number;
  /** Anticipated chunks the question also chose; `kept`: it did not (cached, kept for the layout); `dropped`. */
  used: number;
  kept: number;
  dropped: number;
}

/**
 * A change the answer proposes to one file (the node made it from the answer's edit blocks): the file's
 * text it was made from (null: a new file) and after (null: the file is deleted, as a rename that moves its file does),
 * and the unified diff between them.
 */
export interface ProposedEdit { path: string; uri: string; diff: string; oldText: string | null; newText: string | null }

/** `contenox/chat` result (also what the chat-like workspace commands return). */
export interface ChatResult {
  text: string;
  explain: Explain | null;
  /** "length": the answer was cut at the token limit. */
  finishReason?: string;
  edits?: ProposedEdit[];
  /** Edit blocks of the answer the node could not place, each with why. */
  editProblems?: string[];
  /** What checking the proposed fix found (null: the turn did not verify). */
  verification?: Verification | null;
}

/** A verified fix's verdict (server/verify/report.py Verification.status). */
export const VERIFICATION_STATUSES = ['passed', 'failed', 'skipped'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

/**
 * What the node found when it tested candidate answers in a scratch copy of the workspace with a check command:
 * `passed`: the offered edit passed it; `failed`: no candidate passed; `skipped`: nothing ran (`summary` says why).
 */
export interface Verification {
  status: VerificationStatus;
  /** The verdict in words: "verified: `cmd` passed (2 of 4 candidates); ..." or "not verified: ...". */
  summary: string;
  /** The check command ('' when none ran). */
  command: string;
  /** Candidates tried, and how many of them passed. */
  candidates: number;
  passed: number;
  /** The offered candidate (1-based), or null. */
  chosen: number | null;
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** Exactly the Verification shape (what the webview accepts). */
export function isVerification(v: unknown): v is Verification {
  return isObj(v) && (VERIFICATION_STATUSES as readonly unknown[]).includes(v.status) &&
    typeof v.summary === 'string' && typeof v.command === 'string' && isCount(v.candidates) && isCount(v.passed) &&
    v.passed <= v.candidates && (v.chosen === null || (isCount(v.chosen) && v.chosen >= 1));
}

/** The verification of a chat result, or null when there is none or it is malformed (its fields only). */
export function toVerification(value: unknown): Verification | null {
  if (!isVerification(value)) return null;
  const { status, summary, command, candidates, passed, chosen } = value;
  return { status, summary, command, candidates, passed, chosen };
}

/** The proposed edits of a chat result that are well formed (a malformed entry is dropped). */
export function toEdits(value: unknown): ProposedEdit[] {
  if (!Array.isArray(value)) return [];
  return value.filter((e): e is ProposedEdit => typeof e === 'object' && e !== null &&
    typeof (e as Obj).path === 'string' && isSafeRelativePath((e as Obj).path as string) &&
    typeof (e as Obj).uri === 'string' && typeof (e as Obj).diff === 'string' &&
    ((e as Obj).newText === null || typeof (e as Obj).newText === 'string') &&
    ((e as Obj).oldText === null || typeof (e as Obj).oldText === 'string') &&
    !((e as Obj).oldText === null && (e as Obj).newText === null));
}

/** What the panel shows of a proposed edit. */
export interface EditView { path: string; diff: string; isNew: boolean }
export type EditStatus = 'applied' | 'rejected' | 'failed';

/** `contenox/resolveBlock` params: a chat code block's Apply (the line before it may name its file). */
export interface ResolveBlockParams {
  /** A file or folder of the workspace (the node's workspace is the folder holding it). */
  uri?: string;
  text: string;
  heading?: string;
  /** The question the answer answers (a rename asked for lets a renamed definition rename). */
  question?: string;
  lang?: string;
  /** The file the user picked for a block that names none. */
  path?: string;
}

/** `contenox/resolveBlock` result: the per-file changes the node's edit machinery makes of a code block. */
export interface ResolvedBlock {
  edits: ProposedEdit[];
  /** Why (part of) the block made no change. */
  problems: string[];
  /** What the node did beyond the block (a rename carried to every use). */
  notes: string[];
  /** A block naming no file that resolves nowhere: the workspace files that define its names. */
  candidates: string[];
  /** The file the block's heading (or the picked path) names, or null. */
  named: string | null;
  /** The change is the named file replaced (or created) whole. */
  wholeFile: boolean;
}

/** What the node sent for `contenox/resolveBlock` (malformed entries dropped). */
export function toResolvedBlock(value: unknown): ResolvedBlock {
  const v = isObj(value) ? value : {};
  const strings = (x: unknown): string[] => (Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : []);
  return {
    edits: toEdits(v.edits),
    problems: strings(v.problems),
    notes: strings(v.notes),
    candidates: strings(v.candidates).filter(isSafeRelativePath),
    named: typeof v.named === 'string' && isSafeRelativePath(v.named) ? v.named : null,
    wholeFile: v.wholeFile === true,
  };
}

/** `$/contenox/chatProgress` params: where a chat's turn is before its answer (`text`: the prefill in words). */
export interface ChatProgress { chatId: string; state: string; text: string; done: number; total: number }

/** The pending answer's progress line: "3,840 of 4,699 new prompt tokens computed (…)", else the state. */
export function progressText(p: ChatProgress): string {
  if (p.text) return p.text;
  const words: Record<string, string> = {
    queued: 'waiting for the model…', indexing: 'indexing the workspace…', prefill: 'reading the prompt…',
    decode: 'writing the answer…',
  };
  return words[p.state] ?? '';
}

/** `$/contenox/chatChunk` notification params. */
export interface ChatChunk { chatId: string; text: string }

export type ToolStatus = 'in_progress' | 'completed' | 'failed';

/** A tool call of an agent turn as the panel shows it (one step, collapsed). */
export interface ToolView {
  id: string;
  kind: 'read' | 'search' | 'edit' | 'execute' | 'other';
  title: string;
  status: ToolStatus;
  /** What the tool returned (as the model got it). */
  output: string;
}

/** `$/contenox/chatTool` notification params: a tool call started or ended. */
export interface ChatTool extends ToolView {
  chatId: string;
  locations: { path: string; line: number | null }[];
}

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

/** `contenox/completionInfo` request params: the document inline completions would be asked for. */
export interface CompletionInfoParams { uri: string }

/**
 * `contenox/completionInfo` result: whether the loaded model can complete inline (it needs a
 * fill-in-the-middle format); `reason` says why not when `available` is false.
 */
export interface CompletionInfo { available: boolean; reason: string | null; model: string }

/**
 * `contenox/focus` notification params (client -> server): where the user is, so the node can prefill the code a
 * question about that place would retrieve before the question comes (issue 29, "anticipated context").
 */
export interface FocusParams {
  /** The `file:` URI of the active text editor. */
  uri: string;
  /** The cursor's line (0-based). */
  line: number;
  /** The editor's visible range (0-based). */
  range?: Range;
  /** The chat panel's current thread (ChatSession.thread). */
  thread?: string;
  /** What the user is typing in the chat panel's prompt box, when it is not empty. */
  draft?: string;
  /** The last command that failed in the integrated terminal (`$ command` line, then its output's end), until it
   * passes: the node prefills it after the code and adds it to a question that brings no output of its own. */
  terminal?: string;
}

export const ANTICIPATION_STATES = ['computing', 'warm', 'idle', 'off'] as const;
export type AnticipationState = (typeof ANTICIPATION_STATES)[number];

/** `$/contenox/anticipation` notification params (server -> client): how warm the workspace is for a file. */
export interface Anticipation {
  /** The `file:` URI the anticipated context is for. */
  uri?: string;
  state: AnticipationState;
  /** Retrieved-code tokens prefilled ahead of the question. */
  tokens: number;
  /** One human line, e.g. "warm for parser.py: 1,840 tokens prefilled". */
  text: string;
}

/** What the node sent for `$/contenox/anticipation`, or null when it is not an Anticipation. */
export function toAnticipation(value: unknown): Anticipation | null {
  if (!isObj(value) || !(ANTICIPATION_STATES as readonly unknown[]).includes(value.state)) return null;
  const tokens = isNum(value.tokens) && value.tokens >= 0 ? Math.round(value.tokens) : 0;
  return {
    ...(typeof value.uri === 'string' && value.uri ? { uri: value.uri } : {}),
    state: value.state as AnticipationState,
    tokens,
    text: typeof value.text === 'string' ? value.text.split('\n')[0]!.slice(0, 200) : '',
  };
}

export const Methods = {
  chat: 'contenox/chat',
  chatChunk: '$/contenox/chatChunk',
  chatTool: '$/contenox/chatTool',
  chatProgress: '$/contenox/chatProgress',
  resolveBlock: 'contenox/resolveBlock',
  cacheStatus: '$/contenox/cacheStatus',
  completionInfo: 'contenox/completionInfo',
  /** Client -> server notification: where the user is (FocusParams). */
  focus: 'contenox/focus',
  /** Server -> client notification: the anticipated context's state (Anticipation). */
  anticipation: '$/contenox/anticipation',
  explainContext: 'contenox/explainContext',
  history: 'contenox/history',
  threads: 'contenox/threads',
  pins: 'contenox/pins',
  models: 'contenox/models',
  useModel: 'contenox/useModel',
  /** Server -> client requests (clients that declare the `contenoxRunCommand` experimental capability). */
  runCommand: 'contenox/runCommand',
  allowCheck: 'contenox/allowCheck',
} as const;

/** The model the node serves and the installed ones (`contenox/models`, `contenox/useModel`). */
export interface ModelChoice { current: string; installed: string[] }

/** One recorded turn of a thread (`contenox/history`); a node that sends the turn's explain and finish reason
 * lets a reopened thread show them (otherwise the extension's own record of them is used). A question the node
 * holds no answer for (stopped, failed, or cut off when the node went away) has `unanswered`: why. */
export interface Exchange {
  turn: number; user: string; answer: string; explain?: unknown; finishReason?: string; unanswered?: string;
}

/** The permanent pins of one workspace folder (`contenox/pins`). */
export interface WorkspacePins { root: string; pins: { path: string; uri: string }[] }

/** One thread of the workspace (`contenox/threads`), most recently used first. */
export interface ThreadSummary { thread: string; turns: number; title: string; lastUsed: number }

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
  /** A tool call of the chat's agent turn started or ended (same id: the step is updated). */
  | { type: 'tool'; chatId: string; tool: ToolView }
  /** The pending answer's progress before its first token ("3,840 of 4,699 new prompt tokens computed"). */
  | { type: 'progress'; chatId: string; text: string }
  | {
    type: 'done'; chatId: string; text: string; explain: Explain | null; edits?: EditView[]; problems?: string[];
    /** The answer was cut at the length limit: the page offers Continue. */
    truncated?: boolean;
    /** The node stopped the answer because it was repeating itself (the repeats dropped). */
    repeated?: boolean;
    /** The verdict on the proposed fix, shown with its diffs. */
    verification?: Verification;
  }
  | { type: 'editResult'; chatId: string; index: number; status: EditStatus; message?: string }
  | { type: 'cancelled'; chatId: string }
  /** A new conversation began: the page clears its log. */
  | { type: 'cleared' }
  | { type: 'error'; chatId?: string; message: string }
  | { type: 'explain'; explain: Explain | null };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; prompt: string }
  | { type: 'stop'; chatId: string }
  | { type: 'newChat' }
  /** Open a workspace file (relative path, no `..`) at a 1-based line. */
  | { type: 'open'; path: string; line?: number }
  /** Apply or reject the `index`-th proposed edit of a chat's answer. */
  | { type: 'applyEdit' | 'rejectEdit'; chatId: string; index: number }
  /** A code block's Copy (to the clipboard), Insert (at the cursor of the last active editor) or Apply (to that
   * editor's selection or file, after a diff preview). */
  | { type: 'copyCode' | 'insertCode'; text: string }
  /** A code block's Apply: the node resolves it (the file its heading names, the definitions it replaces). */
  | { type: 'applyCode'; text: string; heading?: string; question?: string; lang?: string }
  /** The prompt box's text changed (what the user is typing, before sending; '' when emptied). */
  | { type: 'draft'; text: string };

/** The most a code block's Copy / Insert carries (a block the page shows is far smaller). */
export const MAX_CODE_CHARS = 1_000_000;
/** The most of the line before a code block that travels with its Apply (the node allows 500). */
export const MAX_HEADING_CHARS = 300;
/** The most of the prompt box's text that travels as a draft (the page cuts a longer one). */
export const MAX_DRAFT_CHARS = 4_000;

export function isFromWebview(value: unknown): value is FromWebview {
  if (typeof value !== 'object' || value === null) return false;
  const msg = value as Record<string, unknown>;
  switch (msg.type) {
    case 'ready':
    case 'newChat':
      return true;
    case 'send':
      return typeof msg.prompt === 'string';
    case 'stop':
      return typeof msg.chatId === 'string';
    case 'open':
      return typeof msg.path === 'string' && isSafeRelativePath(msg.path) &&
        (msg.line === undefined || isLineNumber(msg.line));
    case 'applyEdit':
    case 'rejectEdit':
      return typeof msg.chatId === 'string' && typeof msg.index === 'number' && Number.isInteger(msg.index) &&
        msg.index >= 0;
    case 'copyCode':
    case 'insertCode':
      return typeof msg.text === 'string' && msg.text.length <= MAX_CODE_CHARS;
    case 'draft':
      return typeof msg.text === 'string' && msg.text.length <= MAX_DRAFT_CHARS;
    case 'applyCode':
      return typeof msg.text === 'string' && msg.text.length <= MAX_CODE_CHARS &&
        (msg.heading === undefined || (typeof msg.heading === 'string' && msg.heading.length <= MAX_HEADING_CHARS &&
          !msg.heading.includes('\n'))) &&
        (msg.question === undefined || (typeof msg.question === 'string' && msg.question.length <= MAX_CODE_CHARS)) &&
        (msg.lang === undefined || (typeof msg.lang === 'string' && /^[\w+#.-]{0,32}$/.test(msg.lang)));
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
    case 'progress':
      return typeof msg.chatId === 'string' && typeof msg.text === 'string';
    case 'tool':
      return typeof msg.chatId === 'string' && isObj(msg.tool) && typeof msg.tool.id === 'string' &&
        ['read', 'search', 'edit', 'execute', 'other'].includes(msg.tool.kind as string) && typeof msg.tool.title === 'string' &&
        ['in_progress', 'completed', 'failed'].includes(msg.tool.status as string) &&
        typeof msg.tool.output === 'string';
    case 'done':
      return typeof msg.chatId === 'string' && typeof msg.text === 'string' &&
        (msg.explain === null || isExplain(msg.explain)) &&
        (msg.edits === undefined || (Array.isArray(msg.edits) && msg.edits.every((e: unknown) => isObj(e) &&
          typeof e.path === 'string' && typeof e.diff === 'string' && typeof e.isNew === 'boolean'))) &&
        (msg.problems === undefined || (Array.isArray(msg.problems) &&
          msg.problems.every((p: unknown) => typeof p === 'string'))) &&
        (msg.truncated === undefined || typeof msg.truncated === 'boolean') &&
        (msg.repeated === undefined || typeof msg.repeated === 'boolean') &&
        (msg.verification === undefined || isVerification(msg.verification));
    case 'editResult':
      return typeof msg.chatId === 'string' && typeof msg.index === 'number' &&
        ['applied', 'rejected', 'failed'].includes(msg.status as string) &&
        (msg.message === undefined || typeof msg.message === 'string');
    case 'cancelled':
      return typeof msg.chatId === 'string';
    case 'cleared':
      return true;
    case 'error':
      return typeof msg.message === 'string';
    case 'explain':
      return msg.explain === null || isExplain(msg.explain);
    default:
      return false;
  }
}

// -- workspace locations -------------------------------------------------------------------

/** A 1-based line number. */
export function isLineNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 10_000_000;
}

/**
 * A workspace-relative path that stays inside the workspace: not absolute, no scheme or drive,
 * no backslashes or control characters, no empty or `..` segments.
 */
export function isSafeRelativePath(path: string): boolean {
  if (path.length === 0 || path.length > 1024) return false;
  if (/[\\\u0000-\u001f\u007f]/.test(path)) return false;
  if (path.startsWith('/') || path.startsWith('~') || /^[A-Za-z][\w+.-]*:/.test(path)) return false;
  return path.split('/').every((segment) => segment !== '' && segment !== '..');
}

export interface Location { path: string; line?: number; endLine?: number }

/** `path:line` or `path:start-end` (a chunk id, a citation) as a safe location, or null. */
export function parseLocation(text: string): Location | null {
  const m = /^(.+?):(\d+)(?:[-\u2013](\d+))?$/.exec(text);
  const path = (m ? m[1] : text)?.replace(/^(\.\/)+/, '') ?? '';
  if (!isSafeRelativePath(path)) return null;
  if (!m) return { path };
  const line = Number(m[2]);
  const endLine = m[3] === undefined ? undefined : Number(m[3]);
  if (!isLineNumber(line)) return { path };
  return endLine !== undefined && isLineNumber(endLine) && endLine > line ? { path, line, endLine } : { path, line };
}

// -- Explain: strict guard (webview side) and tolerant normaliser (host side) ---------------

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const optNum = (v: unknown, nullable: boolean): boolean => v === undefined || isNum(v) || (nullable && v === null);

export function isExplainSegment(v: unknown): v is ExplainSegment {
  return isObj(v) && typeof v.kind === 'string' && isNum(v.tokens) && isNum(v.cached) && isNum(v.new) &&
    (v.invalidated_by === null || typeof v.invalidated_by === 'string');
}

export function isRetrievedChunk(v: unknown): v is RetrievedChunk {
  return isObj(v) && typeof v.id === 'string' && typeof v.name === 'string' && isNum(v.tokens) &&
    (v.status === 'new' || v.status === 'in thread') && isStrings(v.reasons);
}

const CITATION_LISTS = ['files_real', 'files_unknown', 'symbols_real', 'symbols_unknown', 'lines_unknown'] as const;

export function isCitations(v: unknown): v is Citations {
  return isObj(v) && CITATION_LISTS.every((key) => isStrings(v[key]));
}

function isTotals(v: unknown): v is ExplainTotals {
  return isObj(v) && isNum(v.tokens) && isNum(v.cached) && isNum(v.new) && isNum(v.hit_pct);
}

/** Exactly the Explain shape (what the webview accepts). */
export function isExplain(v: unknown): v is Explain {
  return isObj(v) && typeof v.workspace === 'string' && isNum(v.turn) && typeof v.model === 'string' &&
    Array.isArray(v.segments) && v.segments.every(isExplainSegment) && isTotals(v.totals) &&
    optNum(v.predicted_cached_tokens, false) && optNum(v.measured_recomputed_tokens, true) &&
    optNum(v.ttft_ms, true) && optNum(v.context_size, false) &&
    isStrings(v.notes) && Array.isArray(v.retrieved) && v.retrieved.every(isRetrievedChunk) &&
    (v.citations === null || isCitations(v.citations));
}

/**
 * What the node sent, as an Explain (or null when it is not one): an older node's missing
 * notes/retrieved/citations become empty, malformed entries are dropped. The result passes isExplain.
 */
export function toExplain(value: unknown): Explain | null {
  if (!isObj(value) || !isTotals(value.totals) || typeof value.workspace !== 'string' || !isNum(value.turn) ||
    typeof value.model !== 'string' || !Array.isArray(value.segments)) return null;
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const explain: Explain = {
    workspace: value.workspace,
    turn: value.turn,
    model: value.model,
    segments: value.segments.filter(isExplainSegment),
    totals: value.totals,
    notes: strings(value.notes),
    retrieved: (Array.isArray(value.retrieved) ? value.retrieved : [])
      .filter((c): c is Obj => isObj(c) && typeof c.id === 'string' && isNum(c.tokens))
      .map((c) => ({
        id: c.id as string,
        name: typeof c.name === 'string' ? c.name : '',
        tokens: c.tokens as number,
        status: c.status === 'in thread' ? 'in thread' : 'new',
        reasons: strings(c.reasons),
      })),
    citations: isObj(value.citations)
      ? {
        files_real: strings(value.citations.files_real),
        files_unknown: strings(value.citations.files_unknown),
        symbols_real: strings(value.citations.symbols_real),
        symbols_unknown: strings(value.citations.symbols_unknown),
        lines_unknown: strings(value.citations.lines_unknown),
      }
      : null,
  };
  if (optNum(value.predicted_cached_tokens, false) && value.predicted_cached_tokens !== undefined) {
    explain.predicted_cached_tokens = value.predicted_cached_tokens as number;
  }
  if (optNum(value.measured_recomputed_tokens, true) && value.measured_recomputed_tokens !== undefined) {
    explain.measured_recomputed_tokens = value.measured_recomputed_tokens as number | null;
  }
  if (optNum(value.ttft_ms, true) && value.ttft_ms !== undefined) explain.ttft_ms = value.ttft_ms as number | null;
  if (optNum(value.context_size, false) && value.context_size !== undefined) {
    explain.context_size = value.context_size as number;
  }
  const a = value.anticipated;
  const keys = ['retrieved_tokens', 'anticipated_tokens', 'cached_tokens', 'new_tokens', 'used', 'kept', 'dropped'];
  if (isObj(a) && keys.every((k) => isNum(a[k]))) {
    explain.anticipated = {
      place: typeof a.place === 'string' ? a.place : '', state: typeof a.state === 'string' ? a.state : '',
      retrieved_tokens: a.retrieved_tokens as number, anticipated_tokens: a.anticipated_tokens as number,
      cached_tokens: a.cached_tokens as number, new_tokens: a.new_tokens as number, used: a.used as number,
      kept: a.kept as number, dropped: a.dropped as number,
    };
  }
  return explain;
}

// -- inline completions ------------------------------------------------------------------------

/** What the node sent for `contenox/completionInfo`, or null when it is not a CompletionInfo. */
export function toCompletionInfo(value: unknown): CompletionInfo | null {
  if (!isObj(value) || typeof value.available !== 'boolean') return null;
  return {
    available: value.available,
    reason: typeof value.reason === 'string' ? value.reason : null,
    model: typeof value.model === 'string' ? value.model : '',
  };
}
