// Anticipated context (issue 29): tell the node where the user is — the active file, the cursor's line, the
// visible range, the chat thread, what is being typed in the chat's prompt box and the last command that failed
// in the terminal — with `contenox/focus`, so it can prefill the code a question about that place would retrieve
// (and the failing output) before the question is asked.
//
// FocusTracker holds the rule (debounce, then send only when the place changed enough) with injected timers and
// an injected send, so the unit tests drive it without VS Code; trackEditors and followChat feed it from the
// editor and the chat session.

import * as vscode from 'vscode';
import type { ChatSession } from './chatSession';
import type { FocusParams, Range } from './protocol';

/** Wait this long after the last editor change (active editor, cursor, scrolling, save) before sending. */
export const FOCUS_DEBOUNCE_MS = 750;
/** Wait this long after the last keystroke in the chat's prompt box before sending its draft. */
export const DRAFT_DEBOUNCE_MS = 600;
/** A cursor (or the top of the visible range) that moved by at most this many lines is the same place. */
export const LINE_SLACK = 5;
/** The most of a failing command's output sent: its end (where the error is). */
export const TERMINAL_CHARS = 12_000;

/** Key of the `contenox` configuration section that turns anticipation off. */
export const ANTICIPATE_SETTING = 'anticipate.enabled';

/** `contenox.anticipate.enabled` (default true; anything but a boolean counts as the default). */
export function readAnticipateEnabled(config: Pick<vscode.WorkspaceConfiguration, 'get'>): boolean {
  const value = config.get<unknown>(ANTICIPATE_SETTING);
  return typeof value === 'boolean' ? value : true;
}

/**
 * Whether `next` is worth sending after `last` (the last focus sent): always on a save or when nothing was sent
 * yet; otherwise when the file, the thread, the draft or the failing run changed, or the cursor line or the top of the visible
 * range moved by more than LINE_SLACK lines (a cursor moving within the same few lines is the same place).
 */
export function shouldSendFocus(last: FocusParams | undefined, next: FocusParams, saved = false): boolean {
  if (saved || last === undefined) return true;
  if (last.uri !== next.uri || last.thread !== next.thread || (last.draft ?? '') !== (next.draft ?? '')) return true;
  if ((last.terminal ?? '') !== (next.terminal ?? '')) return true;
  if (Math.abs(last.line - next.line) > LINE_SLACK) return true;
  const before = last.range?.start.line;
  const after = next.range?.start.line;
  if (before === undefined || after === undefined) return before !== after;
  return Math.abs(before - after) > LINE_SLACK;
}

/** The timer functions the tracker uses (the globals, or a fake in tests). */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Where the user is in a file editor. */
export interface EditorFocus { uri: string; line: number; range?: Range }

/**
 * Debounces the user's place and sends it as `contenox/focus` when it changed enough (shouldSendFocus).
 * `send` returns false when the focus could not go out (the node is not connected): it is sent again later.
 */
export class FocusTracker implements vscode.Disposable {
  /** The chat panel's thread (followChat sets it). */
  thread: () => string | undefined = () => undefined;
  private editor: EditorFocus | undefined;
  private draft = '';
  private terminal = '';
  private last: FocusParams | undefined;
  private saved = false;
  private timer: unknown;

  constructor(
    private readonly send: (params: FocusParams) => boolean,
    private readonly enabled: () => boolean = () => true,
    private readonly timers: Timers = realTimers,
  ) {}

  /** The active editor, its cursor or its visible range changed (undefined or not a `file:` editor: the last
   * file editor stays the place, e.g. while the chat panel has the focus). */
  editorChanged(focus: EditorFocus | undefined): void {
    if (!focus) return;
    this.editor = focus;
    this.schedule(FOCUS_DEBOUNCE_MS);
  }

  /** A document was saved: when it is the active file, the focus is sent again (its diff changed). */
  documentSaved(uri: string): void {
    if (this.editor?.uri !== uri) return;
    this.saved = true;
    this.schedule(FOCUS_DEBOUNCE_MS);
  }

  /** The chat's prompt box now holds `text`. */
  draftChanged(text: string): void {
    const draft = text.trim();
    if (draft === this.draft) return;
    this.draft = draft;
    this.schedule(DRAFT_DEBOUNCE_MS);
  }

  /** A command failed in the terminal (`text`: failingRun's), or the one that failed passed (''). */
  terminalChanged(text: string): void {
    if (text === this.terminal) return;
    this.terminal = text;
    this.schedule(FOCUS_DEBOUNCE_MS);
  }

  /** The draft was sent as a question: the box is empty, and that alone is not worth a focus. */
  draftSent(): void {
    this.draft = '';
    if (this.last?.draft !== undefined) {
      const { draft: _sent, ...rest } = this.last;
      this.last = rest;
    }
  }

  /** The chat panel's thread changed (New chat, a thread switch). */
  threadChanged(): void {
    this.schedule(FOCUS_DEBOUNCE_MS);
  }

  /** Send the current place again even if it did not change (a new connection, anticipation turned on). */
  refresh(): void {
    this.last = undefined;
    this.schedule(FOCUS_DEBOUNCE_MS);
  }

  /** What would be sent now, or undefined when there is no file editor yet. */
  current(): FocusParams | undefined {
    if (!this.editor) return undefined;
    const thread = this.thread();
    return {
      uri: this.editor.uri,
      line: this.editor.line,
      ...(this.editor.range ? { range: this.editor.range } : {}),
      ...(thread ? { thread } : {}),
      ...(this.draft ? { draft: this.draft } : {}),
      ...(this.terminal ? { terminal: this.terminal } : {}),
    };
  }

  private schedule(ms: number): void {
    this.cancel();
    if (!this.enabled()) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, ms);
  }

  private flush(): void {
    const next = this.current();
    if (!next || !this.enabled() || !shouldSendFocus(this.last, next, this.saved)) return;
    if (!this.send(next)) return;
    this.last = next;
    this.saved = false;
  }

  private cancel(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  dispose(): void {
    this.cancel();
  }
}

function toLspRange(start: vscode.Position, end: vscode.Position): Range {
  return { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } };
}

/** Where the user is in `editor`, or undefined when it is not a `file:` editor. */
export function editorFocus(editor: vscode.TextEditor | undefined): EditorFocus | undefined {
  if (!editor || editor.document.uri.scheme !== 'file') return undefined;
  const visible = editor.visibleRanges;
  const first = visible[0];
  const last = visible[visible.length - 1];
  return {
    uri: editor.document.uri.toString(),
    line: editor.selection.active.line,
    ...(first && last ? { range: toLspRange(first.start, last.end) } : {}),
  };
}

/** Feed the tracker from the editors: the active one, its cursor, its scrolling, its saves. */
export function trackEditors(tracker: FocusTracker): vscode.Disposable {
  const active = (editor: vscode.TextEditor): boolean => editor === vscode.window.activeTextEditor;
  tracker.editorChanged(editorFocus(vscode.window.activeTextEditor));
  const subscriptions = [
    vscode.window.onDidChangeActiveTextEditor((editor) => tracker.editorChanged(editorFocus(editor))),
    vscode.window.onDidChangeTextEditorSelection((e) => {
      if (active(e.textEditor)) tracker.editorChanged(editorFocus(e.textEditor));
    }),
    vscode.window.onDidChangeTextEditorVisibleRanges((e) => {
      if (active(e.textEditor)) tracker.editorChanged(editorFocus(e.textEditor));
    }),
    vscode.workspace.onDidSaveTextDocument((document) => tracker.documentSaved(document.uri.toString())),
  ];
  return { dispose: () => subscriptions.forEach((s) => s.dispose()) };
}

/** Feed the tracker from the chat: its thread, and the draft its pages post. */
export function followChat(tracker: FocusTracker, session: ChatSession): void {
  tracker.thread = () => session.thread;
  const remember = session.rememberThread;
  session.rememberThread = (thread) => {
    remember(thread);
    tracker.threadChanged();
  };
  session.onDraft = (text, sent) => (sent ? tracker.draftSent() : tracker.draftChanged(text));
}

// -- the terminal's failing runs ------------------------------------------------------------------------------
// VS Code's shell integration (1.93+) reports each command a terminal runs, its output and its exit code. The
// API is read where the running VS Code has it (the extension supports older ones, which report nothing).

/** A command run in a terminal with shell integration (the part of vscode.TerminalShellExecution used here). */
export interface ShellExecution {
  readonly commandLine: { readonly value: string };
  readonly cwd?: vscode.Uri;
  read(): AsyncIterable<string>;
}

/** Where shell executions start and end (vscode.window on VS Code 1.93+). */
export interface ShellEvents {
  onDidStartTerminalShellExecution?: vscode.Event<{ readonly execution: ShellExecution }>;
  onDidEndTerminalShellExecution?: vscode.Event<{ readonly execution: ShellExecution; readonly exitCode: number | undefined }>;
}

// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROLS = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]|\r(?!\n)/g;

/** A terminal's output as text: colour codes, shell-integration marks and carriage returns removed. */
export function plainTerminalText(raw: string): string {
  return raw.replace(TERMINAL_CONTROLS, '').replace(/\r\n/g, '\n');
}

/** A failing run as the node takes it: the `$ command` line, then the end of its output (at most `limit`
 * characters in all; a cut is said on the line after the command, and falls between lines). */
export function failingRun(commandLine: string, output: string, limit = TERMINAL_CHARS): string {
  const head = `$ ${commandLine.trim()}`;
  const text = plainTerminalText(output).replace(/\s+$/, '');
  if (head.length + 1 + text.length <= limit) return `${head}\n${text}`;
  const tail = text.slice(text.length - Math.max(0, limit - head.length - 60));
  const kept = tail.slice(tail.indexOf('\n') + 1);
  return `${head}\n[... ${(text.length - kept.length).toLocaleString('en-US')} characters of output cut ...]\n${kept}`;
}

/**
 * Follows the terminal's commands: one that fails (exit code other than 0) becomes the tracker's failing run,
 * and the same command passing later clears it. Output is read as it comes, its last TERMINAL_CHARS kept.
 * `inWorkspace` says whether a command's folder (when known) belongs to the workspace.
 */
export class TerminalRuns implements vscode.Disposable {
  private readonly reading = new Map<ShellExecution, { text: string; done: Promise<void> }>();
  private failing: string | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly tracker: Pick<FocusTracker, 'terminalChanged'>,
    events: ShellEvents,
    private readonly inWorkspace: (cwd: vscode.Uri) => boolean = () => true,
  ) {
    if (events.onDidStartTerminalShellExecution) {
      this.subscriptions.push(events.onDidStartTerminalShellExecution((e) => this.started(e.execution)));
    }
    if (events.onDidEndTerminalShellExecution) {
      this.subscriptions.push(events.onDidEndTerminalShellExecution((e) => void this.ended(e.execution, e.exitCode)));
    }
  }

  /** Whether the running VS Code reports terminal commands at all. */
  static available(events: ShellEvents): boolean {
    return typeof events.onDidStartTerminalShellExecution === 'function'
      && typeof events.onDidEndTerminalShellExecution === 'function';
  }

  private started(execution: ShellExecution): void {
    if (execution.cwd && !this.inWorkspace(execution.cwd)) return;
    const entry = { text: '', done: Promise.resolve() };
    entry.done = (async () => {
      try {
        for await (const data of execution.read()) {
          entry.text = (entry.text + data).slice(-2 * TERMINAL_CHARS);
        }
      } catch {
        // the terminal went away: what was read stays
      }
    })();
    this.reading.set(execution, entry);
  }

  /** A command ended; resolves once its outcome reached the tracker. */
  async ended(execution: ShellExecution, exitCode: number | undefined): Promise<void> {
    const entry = this.reading.get(execution);
    if (!entry) return;
    this.reading.delete(execution);
    // the stream ends with the command; wait a little for its last data, never for long
    await Promise.race([entry.done, new Promise((r) => setTimeout(r, 500))]);
    const command = execution.commandLine.value.trim();
    if (!command || exitCode === undefined) return; // no command line or no exit code: nothing known
    if (exitCode !== 0) {
      this.failing = command;
      this.tracker.terminalChanged(failingRun(command, entry.text));
    } else if (command === this.failing) {
      this.failing = undefined;
      this.tracker.terminalChanged('');
    }
  }

  dispose(): void {
    this.subscriptions.forEach((s) => s.dispose());
    this.reading.clear();
  }
}
