// The chat panel's logic, independent of the webview object: runs `contenox/chat` requests and
// chat-like server commands, forwards `$/contenox/chatChunk` to the page, cancels on Stop.

import * as vscode from 'vscode';
import { applyCodeBlock, type CodeBlock } from './applyBlock';
import { applyProposedEdit } from './applyEdit';
import { applyWithPreview, copyToClipboard, insertAtCursor } from './codeActions';
import { openInWorkspace } from './openLocation';
import { mergeNotes, TurnNoteStore, toTurnNote, type TurnNote, type TurnNotes } from './turnNotes';
import {
  isFromWebview,
  progressText,
  toEdits,
  toExplain,
  toResolvedBlock,
  toVerification,
  type ChatChunk,
  type ChatProgress,
  type ChatParams,
  type ChatTool,
  type ChatResult,
  type Exchange,
  type Explain,
  type ProposedEdit,
  type ResolveBlockParams,
  type ThreadSummary,
  type ToWebview,
} from './protocol';

/** What the session needs from the language client (a fake in unit tests). */
export interface ChatBackend {
  chat(params: ChatParams, token: vscode.CancellationToken): Promise<ChatResult | null>;
  executeCommand(command: string, args: unknown[], token: vscode.CancellationToken): Promise<unknown>;
  explainContext(uri?: string): Promise<Explain | null>;
  /** The recorded turns of a node thread (optional: a backend without it restores nothing). */
  history?(thread: string): Promise<Exchange[]>;
  /** The workspace's threads, most recently used first (optional: no thread picker without it). */
  threads?(): Promise<ThreadSummary[]>;
  /** `contenox/resolveBlock`: what the node's edit machinery makes of a code block (optional: without it a
   * block's Apply replaces the editor's selection). */
  resolveBlock?(params: ResolveBlockParams): Promise<unknown>;
}

interface Running { source: vscode.CancellationTokenSource; streamed: string }

/** A code block's actions (a fake in unit tests). */
export interface CodeActions {
  copy(text: string): Promise<void>;
  insert(text: string): Promise<string | null>;
  /** Apply a code block where the node resolves it (or the last editor's selection), after a diff preview; why
   * not, or null. */
  apply(block: CodeBlock): Promise<string | null>;
}

let counter = 0;
export function newChatId(): string {
  counter += 1;
  return `chat-${Date.now().toString(36)}-${counter}`;
}

/** Turn whatever a server command returned into an answer for the panel. */
export function resultToAnswer(result: unknown, streamed = ''): ChatResult {
  if (result && typeof result === 'object' && !Array.isArray(result)) {
    const r = result as Record<string, unknown>;
    if (typeof r.text === 'string') {
      const edits = toEdits(r.edits);
      const problems = Array.isArray(r.editProblems) ? r.editProblems.filter((p) => typeof p === 'string') : [];
      const verification = toVerification(r.verification);
      return {
        text: r.text, explain: toExplain(r.explain),
        ...(edits.length > 0 ? { edits } : {}), ...(problems.length > 0 ? { editProblems: problems } : {}),
        ...(verification ? { verification } : {}),
      };
    }
    if (Array.isArray(r.related)) return resultToAnswer(r.related, streamed); // contenox.findRelated
  }
  if (Array.isArray(result)) {
    if (result.length === 0) return { text: streamed || 'Nothing related found.', explain: null };
    const lines = result.map((item) => {
      if (item && typeof item === 'object') {
        const o = item as Record<string, unknown>;
        const path = String(o.path ?? o.file ?? o.uri ?? '');
        const line = typeof o.line === 'number' ? `:${o.line}` : '';
        const kind = typeof o.kind === 'string' ? ` (${o.kind})` : '';
        const name = typeof o.name === 'string' ? ` ${o.name}${kind}` : kind;
        const text = typeof o.text === 'string' ? ` — ${o.text.trim()}` : '';
        return `- \`${path}${line}\`${name}${text}`;
      }
      return `- ${String(item)}`;
    });
    return { text: lines.join('\n'), explain: null };
  }
  if (result === null || result === undefined) return { text: streamed, explain: null };
  return { text: streamed || '```json\n' + JSON.stringify(result, null, 2) + '\n```', explain: null };
}

function isCancelError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === -32800 /* RequestCancelled */ || code === -32802 /* ServerCancelled */ ||
    (err instanceof Error && err.name === 'Canceled');
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err && typeof err === 'object' && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}

export class ChatSession implements vscode.Disposable {
  private readonly running = new Map<string, Running>();
  private ready = false;
  private readonly queue: ToWebview[] = [];
  /** The node thread this panel talks in; New chat starts another (the old one stays in `contenox threads`). */
  thread = 'panel';
  /** Told the thread whenever New chat or a thread switch changes it (kept across window restarts). */
  rememberThread: (thread: string) => void = () => undefined;
  /** Told when New chat starts a thread (the status bar forgets the last turn). */
  onNewChat: () => void = () => undefined;
  /** Told what the prompt box holds as the user types (`sent`: it was just sent as a question, the box is empty). */
  onDraft: (text: string, sent: boolean) => void = () => undefined;
  /** Each answer's explain and stop notes by thread and turn, which the node's history does not keep. */
  turnNotes: TurnNotes = new TurnNoteStore();
  /** Proposed edits by chat, each until it is applied or rejected (then undefined). */
  private readonly proposals = new Map<string, (ProposedEdit | undefined)[]>();
  /** What the page shows of the thread since it was last cleared: replayed to a page that joins later. */
  private readonly shown: ToWebview[] = [];

  constructor(
    private readonly backend: ChatBackend,
    private readonly post: (msg: ToWebview) => void,
    /** Told about failed (not cancelled) requests, e.g. to show "model missing" in the status bar. */
    private readonly onError: (err: unknown) => void = () => undefined,
    /** Opens a workspace-relative file at a 1-based line (the page's links). */
    private readonly open: (path: string, line?: number) => Promise<unknown> = openInWorkspace,
    /** Applies a proposed edit; the reason it was not applied, or null. */
    private readonly apply: (edit: ProposedEdit) => Promise<string | null> = applyProposedEdit,
    /** A code block's Copy, Insert and Apply (the reason Insert or Apply did not happen, or null). */
    private readonly code: CodeActions = {
      copy: copyToClipboard,
      insert: insertAtCursor,
      apply: (block) => {
        const resolveBlock = backend.resolveBlock?.bind(backend);
        return resolveBlock
          ? applyCodeBlock(block, async (params) => toResolvedBlock(await resolveBlock(params)))
          : applyWithPreview(block.text);
      },
    },
  ) {}

  /** Messages from the webview. Unknown shapes are ignored. */
  async handleMessage(raw: unknown): Promise<void> {
    if (!isFromWebview(raw)) return;
    switch (raw.type) {
      case 'ready':
        this.ready = true;
        if (!this.restored) await this.restore();
        for (const msg of this.queue.splice(0)) this.emit(msg);
        return;
      case 'send':
        this.onDraft('', true);
        await this.ask(raw.prompt);
        return;
      case 'draft':
        this.onDraft(raw.text, false);
        return;
      case 'stop':
        this.stop(raw.chatId);
        return;
      case 'newChat':
        this.newChat();
        return;
      case 'open':
        // The guard already refused absolute paths, schemes and `..`.
        try {
          await this.open(raw.path, raw.line);
        } catch (err) {
          this.send({ type: 'error', message: `Could not open ${raw.path}: ${errorMessage(err)}` });
        }
        return;
      case 'copyCode':
        try {
          await this.code.copy(raw.text);
        } catch (err) {
          this.send({ type: 'error', message: `Could not copy: ${errorMessage(err)}` });
        }
        return;
      case 'insertCode':
      case 'applyCode': {
        const insert = raw.type === 'insertCode';
        let problem: string | null;
        try {
          problem = await (raw.type !== 'applyCode' ? this.code.insert(raw.text) : this.code.apply({
            text: raw.text,
            ...(raw.heading ? { heading: raw.heading } : {}),
            ...(raw.question ? { question: raw.question } : {}),
            ...(raw.lang ? { lang: raw.lang } : {}),
          }));
        } catch (err) {
          problem = errorMessage(err);
        }
        if (problem !== null) {
          this.send({ type: 'error', message: `Could not ${insert ? 'insert' : 'apply'} the code: ${problem}` });
        }
        return;
      }
      case 'applyEdit':
      case 'rejectEdit':
        await this.decide(raw.chatId, raw.index, raw.type === 'applyEdit');
        return;
    }
  }

  /** Apply (or reject) a proposed edit once; a second click, or an unknown edit, does nothing. */
  private async decide(chatId: string, index: number, apply: boolean): Promise<void> {
    const edits = this.proposals.get(chatId);
    const edit = edits?.[index];
    if (!edits || !edit) return;
    edits[index] = undefined;
    if (!apply) {
      this.send({ type: 'editResult', chatId, index, status: 'rejected' });
      return;
    }
    let problem: string | null;
    try {
      problem = await this.apply(edit);
    } catch (err) {
      problem = errorMessage(err);
    }
    this.send(problem === null
      ? { type: 'editResult', chatId, index, status: 'applied' }
      : { type: 'editResult', chatId, index, status: 'failed', message: problem });
  }

  /** The page was reloaded/recreated: queue until it says ready again, then show the thread again. */
  resetPage(): void {
    this.ready = false;
    this.restored = false;
    this.shown.length = 0;
  }

  /** A page is up (another page that opens joins it with `transcript`). */
  get isReady(): boolean {
    return this.ready;
  }

  /** What the page shows since it was last cleared (progress lines left out), for a second page that opens. */
  get transcript(): ToWebview[] {
    return [...this.shown];
  }

  private restored = false;

  /** Show the thread's recorded turns (what the model is given) on a new or reloaded page. */
  private async restore(): Promise<void> {
    this.restored = true;
    let turns: Exchange[] = [];
    try {
      turns = (await this.backend.history?.(this.thread)) ?? [];
    } catch {
      return; // the node is not there yet: nothing to show
    }
    let unanswered = 0;
    for (const turn of turns) {
      if (turn.unanswered) { // asked, never answered: the question where it was asked, and why
        const chatId = `restored-${this.thread}-unanswered-${++unanswered}`;
        this.emit({ type: 'start', chatId, prompt: turn.user });
        this.emit({ type: 'error', chatId, message: `No answer: ${turn.unanswered}` });
        continue;
      }
      const chatId = `restored-${this.thread}-${turn.turn}`;
      // The node's record of the turn where it has one (older journals keep no finish reason), else what this
      // extension kept of the answer.
      const sent = toTurnNote({ explain: turn.explain, truncated: turn.finishReason === 'length',
        repeated: turn.finishReason === 'repetition' });
      const kept = this.turnNotes.get(this.thread, turn.turn);
      const note = mergeNotes(sent, kept);
      this.emit({ type: 'start', chatId, prompt: turn.user });
      this.emit({
        type: 'done', chatId, text: turn.answer, explain: note?.explain ?? null,
        ...(note?.truncated ? { truncated: true } : {}), ...(note?.repeated ? { repeated: true } : {}),
      });
    }
  }

  /** Post to the page now, and keep it for a page that joins later. */
  private emit(msg: ToWebview): void {
    this.keep(msg);
    this.post(msg);
  }

  private keep(msg: ToWebview): void {
    if (msg.type === 'cleared') this.shown.length = 0;
    else if (msg.type !== 'progress') this.shown.push(msg);
  }

  private send(msg: ToWebview): void {
    if (this.ready) this.emit(msg);
    else this.queue.push(msg); // kept when posted, after the thread's turns
  }

  get activeChats(): string[] {
    return [...this.running.keys()];
  }

  /** `$/contenox/chatChunk`: forward chunks of chats this panel started. */
  onChunk(chunk: ChatChunk): void {
    const run = this.running.get(chunk.chatId);
    if (!run || run.source.token.isCancellationRequested) return;
    run.streamed += chunk.text;
    this.send({ type: 'chunk', chatId: chunk.chatId, text: chunk.text });
  }

  /** `$/contenox/chatProgress`: the prefill's progress of a chat this panel started, until its answer streams. */
  onProgress(progress: ChatProgress): void {
    const run = this.running.get(progress.chatId);
    if (!run || run.source.token.isCancellationRequested || run.streamed !== '') return;
    const text = progressText(progress);
    if (text) this.send({ type: 'progress', chatId: progress.chatId, text });
  }

  /** `$/contenox/chatTool`: a tool call of a chat this panel started, started or ended. */
  onTool(tool: ChatTool): void {
    const run = this.running.get(tool.chatId);
    if (!run || run.source.token.isCancellationRequested) return;
    this.send({ type: 'tool', chatId: tool.chatId,
      tool: { id: tool.id, kind: tool.kind, title: tool.title, status: tool.status, output: tool.output } });
  }

  stop(chatId?: string): void {
    const ids = chatId ? [chatId] : [...this.running.keys()];
    for (const id of ids) this.running.get(id)?.source.cancel();
  }

  ask(prompt: string, extra: Omit<ChatParams, 'chatId' | 'prompt'> = {}): Promise<void> {
    return this.run(prompt, (chatId, token) => this.backend.chat({ chatId, prompt, thread: this.thread, ...extra },
      token));
  }

  /** Stop what runs, start a new thread, clear the page. */
  newChat(): void {
    this.stop();
    this.proposals.clear();
    this.thread = `panel-${Date.now().toString(36)}`;
    this.rememberThread(this.thread);
    this.restored = true;
    this.send({ type: 'cleared' });
    this.onNewChat();
  }

  /** Stop what runs and continue an existing thread: the page shows its recorded turns. */
  async openThread(thread: string): Promise<void> {
    this.stop();
    this.proposals.clear();
    this.thread = thread;
    this.rememberThread(thread);
    if (!this.ready) { // the page is not up yet: it opens on this thread (nothing queued for the old one)
      this.queue.length = 0;
      this.shown.length = 0;
      this.restored = false;
      return;
    }
    this.send({ type: 'cleared' });
    await this.restore();
  }

  /** Run a chat-like server command (explain/find related/ask about selection) into the panel. */
  runCommand(label: string, command: string, args: unknown[]): Promise<void> {
    return this.run(label, async (chatId, token) => {
      const first = args[0];
      const withId = first && typeof first === 'object' && !Array.isArray(first)
        ? [{ ...(first as Record<string, unknown>), chatId, thread: this.thread }, ...args.slice(1)]
        : args;
      const result = await this.backend.executeCommand(command, withId, token);
      return resultToAnswer(result, this.running.get(chatId)?.streamed ?? '');
    });
  }

  async showExplain(uri?: string): Promise<void> {
    try {
      this.send({ type: 'explain', explain: toExplain(await this.backend.explainContext(uri)) });
    } catch (err) {
      this.send({ type: 'error', message: `Explain context failed: ${errorMessage(err)}` });
    }
  }

  private async run(
    prompt: string,
    call: (chatId: string, token: vscode.CancellationToken) => Promise<ChatResult | null>,
  ): Promise<void> {
    const chatId = newChatId();
    const source = new vscode.CancellationTokenSource();
    this.running.set(chatId, { source, streamed: '' });
    this.send({ type: 'start', chatId, prompt });
    try {
      const result = await call(chatId, source.token);
      if (source.token.isCancellationRequested) {
        this.send({ type: 'cancelled', chatId });
      } else {
        const streamed = this.running.get(chatId)?.streamed ?? '';
        const edits = toEdits(result?.edits);
        if (edits.length > 0) this.proposals.set(chatId, [...edits]);
        const problems = (result?.editProblems ?? []).filter((p) => typeof p === 'string');
        const verification = toVerification(result?.verification); // a malformed one is dropped
        const explain = toExplain(result?.explain);
        const note: TurnNote = { explain, ...(result?.finishReason === 'length' ? { truncated: true } : {}),
          ...(result?.finishReason === 'repetition' ? { repeated: true } : {}) };
        // Kept by the turn's number (the node's history numbers turns the same way) for a thread reopened later.
        if (explain && explain.turn > 0) this.turnNotes.set(this.thread, explain.turn, note);
        this.send({
          type: 'done', chatId, text: result?.text ?? streamed, explain,
          ...(edits.length > 0 ? { edits: edits.map((e) => ({ path: e.path, diff: e.diff, isNew: e.oldText === null })) } : {}),
          ...(problems.length > 0 ? { problems } : {}),
          ...(result?.finishReason === 'length' ? { truncated: true } : {}),
          ...(result?.finishReason === 'repetition' ? { repeated: true } : {}),
          ...(verification ? { verification } : {}),
        });
      }
    } catch (err) {
      if (source.token.isCancellationRequested || isCancelError(err)) {
        this.send({ type: 'cancelled', chatId });
      } else {
        this.send({ type: 'error', chatId, message: errorMessage(err) });
        this.onError(err);
      }
    } finally {
      this.running.delete(chatId);
      source.dispose();
    }
  }

  dispose(): void {
    this.stop();
  }
}
