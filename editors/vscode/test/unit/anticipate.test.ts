// Anticipated context (issue 29): the focus rule (debounce, then resend only when the place changed enough), the
// editors and the chat page feeding it, and the setting.
import * as fs from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import {
  ANTICIPATE_SETTING, DRAFT_DEBOUNCE_MS, FOCUS_DEBOUNCE_MS, FocusTracker, LINE_SLACK, TerminalRuns, editorFocus,
  failingRun, followChat, plainTerminalText, readAnticipateEnabled, shouldSendFocus, trackEditors, type EditorFocus,
  type ShellEvents, type ShellExecution, type Timers,
} from '../../src/anticipate';
import { ChatPanel } from '../../src/chatPanel';
import type { ChatBackend } from '../../src/chatSession';
import type { FocusParams, Range } from '../../src/protocol';
import { EXPLAIN } from './fixtures';

const mock = vscode as unknown as typeof import('../mocks/vscode');

/** Timers driven by the test: advance(ms) runs what falls due, in order. */
class FakeTimers implements Timers {
  now = 0;
  private nextId = 1;
  private readonly due = new Map<number, { at: number; fn: () => void }>();
  setTimeout(fn: () => void, ms: number): number {
    const id = this.nextId++;
    this.due.set(id, { at: this.now + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }
  get pending(): number {
    return this.due.size;
  }
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      const next = [...this.due.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!next) break;
      this.due.delete(next[0]);
      this.now = next[1].at;
      next[1].fn();
    }
    this.now = end;
  }
}

const URI = 'file:///ws/parser.py';
const range = (start: number, end: number): Range => ({ start: { line: start, character: 0 }, end: { line: end, character: 0 } });
const at = (line: number, top = 0, uri = URI): EditorFocus => ({ uri, line, range: range(top, top + 40) });

function tracker(opts: { enabled?: () => boolean; connected?: () => boolean } = {}) {
  const timers = new FakeTimers();
  const sent: FocusParams[] = [];
  const t = new FocusTracker((params) => {
    if (opts.connected && !opts.connected()) return false;
    sent.push(params);
    return true;
  }, opts.enabled, timers);
  return { t, timers, sent };
}

describe('shouldSendFocus', () => {
  const last: FocusParams = { uri: URI, line: 100, range: range(80, 120), thread: 'panel' };
  it('sends the first focus and any focus on a save', () => {
    expect(shouldSendFocus(undefined, last)).toBe(true);
    expect(shouldSendFocus(last, { ...last }, true)).toBe(true);
  });
  it(`does not resend a cursor that moved by at most ${LINE_SLACK} lines`, () => {
    expect(shouldSendFocus(last, { ...last })).toBe(false);
    expect(shouldSendFocus(last, { ...last, line: 100 + LINE_SLACK })).toBe(false);
    expect(shouldSendFocus(last, { ...last, line: 100 - LINE_SLACK })).toBe(false);
    expect(shouldSendFocus(last, { ...last, line: 100 + LINE_SLACK + 1 })).toBe(true);
    expect(shouldSendFocus(last, { ...last, line: 100 - LINE_SLACK - 1 })).toBe(true);
  });
  it('resends when the file, the thread or the draft changes', () => {
    expect(shouldSendFocus(last, { ...last, uri: 'file:///ws/lexer.py' })).toBe(true);
    expect(shouldSendFocus(last, { ...last, thread: 'panel-2' })).toBe(true);
    expect(shouldSendFocus(last, { ...last, draft: 'why' })).toBe(true);
    expect(shouldSendFocus({ ...last, draft: 'why' }, { ...last, draft: 'why does' })).toBe(true);
    expect(shouldSendFocus({ ...last, draft: 'why' }, { ...last })).toBe(true);
    expect(shouldSendFocus({ ...last, draft: 'why' }, { ...last, draft: 'why' })).toBe(false);
  });
  it('resends when the view scrolled by more than a few lines (the cursor left where it was)', () => {
    expect(shouldSendFocus(last, { ...last, range: range(80 + LINE_SLACK, 120 + LINE_SLACK) })).toBe(false);
    expect(shouldSendFocus(last, { ...last, range: range(80 + LINE_SLACK + 1, 121 + LINE_SLACK) })).toBe(true);
  });
});

describe('FocusTracker', () => {
  it(`sends ${FOCUS_DEBOUNCE_MS} ms after the last editor change, once`, () => {
    const { t, timers, sent } = tracker();
    t.thread = () => 'panel';
    t.editorChanged(at(10));
    timers.advance(500);
    t.editorChanged(at(40)); // restarts the wait
    timers.advance(FOCUS_DEBOUNCE_MS - 1);
    expect(sent).toEqual([]);
    timers.advance(1);
    expect(sent).toEqual([{ uri: URI, line: 40, range: range(0, 40), thread: 'panel' }]);
    expect(timers.pending).toBe(0);
  });

  it('a cursor moving within the same few lines is not sent again; further away it is', () => {
    const { t, timers, sent } = tracker();
    t.editorChanged(at(40));
    timers.advance(FOCUS_DEBOUNCE_MS);
    for (const line of [41, 43, 45, 42]) {
      t.editorChanged(at(line));
      timers.advance(FOCUS_DEBOUNCE_MS);
    }
    expect(sent.map((p) => p.line)).toEqual([40]);
    t.editorChanged(at(46));
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.map((p) => p.line)).toEqual([40, 46]);
    // Drift is measured from what was sent last: 46 -> 51 stays, 52 goes.
    t.editorChanged(at(51));
    timers.advance(FOCUS_DEBOUNCE_MS);
    t.editorChanged(at(52));
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.map((p) => p.line)).toEqual([40, 46, 52]);
  });

  it('another file is sent at once after the wait; a non-file editor keeps the last file', () => {
    const { t, timers, sent } = tracker();
    t.editorChanged(at(3));
    timers.advance(FOCUS_DEBOUNCE_MS);
    t.editorChanged(undefined); // e.g. the chat panel took the focus
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(timers.pending).toBe(0);
    t.editorChanged(at(3, 0, 'file:///ws/lexer.py'));
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.map((p) => p.uri)).toEqual([URI, 'file:///ws/lexer.py']);
  });

  it('a save of the active file resends the same place; a save of another file does not', () => {
    const { t, timers, sent } = tracker();
    t.editorChanged(at(7));
    timers.advance(FOCUS_DEBOUNCE_MS);
    t.documentSaved('file:///ws/other.py');
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toHaveLength(1);
    t.documentSaved(URI);
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toEqual(sent[0]);
    t.editorChanged(at(8)); // the save was sent: a small move is not
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toHaveLength(2);
  });

  it(`sends a draft ${DRAFT_DEBOUNCE_MS} ms after the last keystroke, each new draft once`, () => {
    const { t, timers, sent } = tracker();
    t.draftChanged('why'); // no file editor yet: nothing to send
    timers.advance(DRAFT_DEBOUNCE_MS);
    expect(sent).toEqual([]);
    t.editorChanged(at(12));
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.at(-1)).toMatchObject({ line: 12, draft: 'why' });
    t.draftChanged('why does');
    timers.advance(300);
    t.draftChanged('why does parse');
    timers.advance(DRAFT_DEBOUNCE_MS - 1);
    expect(sent).toHaveLength(1);
    timers.advance(1);
    expect(sent.at(-1)).toEqual({ uri: URI, line: 12, range: range(0, 40), draft: 'why does parse' });
    t.draftChanged('why does parse  '); // only whitespace added: the same draft
    timers.advance(DRAFT_DEBOUNCE_MS);
    expect(sent).toHaveLength(2);
    t.draftChanged('   ');
    timers.advance(DRAFT_DEBOUNCE_MS);
    expect(sent.at(-1)).not.toHaveProperty('draft'); // emptied: said once, without a draft
  });

  it('a draft sent as a question is dropped without a focus of its own', () => {
    const { t, timers, sent } = tracker();
    t.editorChanged(at(12));
    t.draftChanged('why does parse');
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toHaveLength(1);
    t.draftSent();
    t.editorChanged(at(13));
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toHaveLength(1);
    t.editorChanged(at(30));
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.at(-1)).not.toHaveProperty('draft');
  });

  it('a thread change resends the place with the new thread', () => {
    const { t, timers, sent } = tracker();
    let thread = 'panel';
    t.thread = () => thread;
    t.editorChanged(at(5));
    timers.advance(FOCUS_DEBOUNCE_MS);
    thread = 'panel-x';
    t.threadChanged();
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.map((p) => p.thread)).toEqual(['panel', 'panel-x']);
  });

  it('sends nothing while turned off (no timer either); turned on again, it sends the current place', () => {
    let enabled = false;
    const { t, timers, sent } = tracker({ enabled: () => enabled });
    t.editorChanged(at(5));
    t.draftChanged('x');
    expect(timers.pending).toBe(0);
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toEqual([]);
    enabled = true;
    t.refresh();
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toEqual([{ uri: URI, line: 5, range: range(0, 40), draft: 'x' }]);
  });

  it('a focus that could not go out (not connected) is sent once the node is there', () => {
    let connected = false;
    const { t, timers, sent } = tracker({ connected: () => connected });
    t.editorChanged(at(5));
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toEqual([]);
    connected = true;
    t.editorChanged(at(6)); // not recorded as sent: a small move still goes out
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.map((p) => p.line)).toEqual([6]);
    t.refresh(); // a new connection: the same place again
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.map((p) => p.line)).toEqual([6, 6]);
    t.dispose();
  });
});

describe('the editors feed the tracker', () => {
  const editor = (path: string, line: number, top: number, scheme = 'file') => ({
    document: { uri: scheme === 'file' ? mock.Uri.file(path) : mock.Uri.from({ scheme, path }) },
    selection: { active: { line, character: 2 } },
    visibleRanges: [{ start: { line: top, character: 0 }, end: { line: top + 20, character: 0 } },
      { start: { line: top + 30, character: 0 }, end: { line: top + 50, character: 4 } }],
  });

  it('active editor, cursor, scrolling and saves of file editors only', () => {
    const { t, timers, sent } = tracker();
    const a = editor('/ws/parser.py', 30, 10);
    mock.window.activeTextEditor = a;
    const sub = trackEditors(t);
    timers.advance(FOCUS_DEBOUNCE_MS);
    // The visible ranges (folding splits them) become one range.
    expect(sent).toEqual([{ uri: 'file:///ws/parser.py', line: 30,
      range: { start: { line: 10, character: 0 }, end: { line: 60, character: 4 } } }]);

    a.selection.active.line = 50;
    mock.editorEvents.selection.fire({ textEditor: a });
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.at(-1)).toMatchObject({ line: 50 });

    a.visibleRanges[0]!.start.line = 40;
    mock.editorEvents.visibleRanges.fire({ textEditor: a });
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.at(-1)!.range!.start.line).toBe(40);

    const other = editor('/ws/lexer.py', 1, 0); // visible beside, not active: ignored
    other.selection.active.line = 90;
    mock.editorEvents.selection.fire({ textEditor: other });
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toHaveLength(3);

    const untitled = editor('Untitled-1', 0, 0, 'untitled');
    mock.window.activeTextEditor = untitled;
    mock.editorEvents.activeEditor.fire(untitled);
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toHaveLength(3);
    expect(editorFocus(untitled as unknown as vscode.TextEditor)).toBeUndefined();

    mock.editorEvents.saved.fire({ uri: mock.Uri.file('/ws/parser.py') });
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toHaveLength(4);

    mock.window.activeTextEditor = other;
    mock.editorEvents.activeEditor.fire(other);
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.at(-1)).toMatchObject({ uri: 'file:///ws/lexer.py', line: 90 });
    sub.dispose();
    mock.window.activeTextEditor = undefined;
  });
});

describe('the chat page feeds the tracker', () => {
  beforeEach(() => {
    mock.created.panels.length = 0;
  });

  it('the draft the page posts reaches a focus notification with the thread; New chat resends the thread', async () => {
    const chats: string[] = [];
    const backend: ChatBackend = {
      chat: async (params) => { chats.push(params.prompt); return { text: 'ok', explain: EXPLAIN }; },
      executeCommand: async () => null,
      explainContext: async () => EXPLAIN,
    };
    const chat = new ChatPanel(mock.Uri.file('/ext') as unknown as vscode.Uri, backend);
    const remembered: string[] = [];
    chat.session.rememberThread = (thread) => remembered.push(thread);
    const { t, timers, sent } = tracker();
    followChat(t, chat.session);
    t.editorChanged(at(12));
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toEqual([{ uri: URI, line: 12, range: range(0, 40), thread: 'panel' }]);

    chat.show();
    const page = mock.created.panels[0]!;
    page.webview.send({ type: 'ready' });
    page.webview.send({ type: 'draft', text: 'why does parse fail' });
    page.webview.send({ type: 'draft', text: 'x'.repeat(5_000) }); // over the cap: refused
    timers.advance(DRAFT_DEBOUNCE_MS);
    expect(sent.at(-1)).toEqual({ uri: URI, line: 12, range: range(0, 40), thread: 'panel', draft: 'why does parse fail' });

    page.webview.send({ type: 'send', prompt: 'why does parse fail' });
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toHaveLength(2); // asking is not a focus change
    await new Promise((r) => setTimeout(r, 0));
    expect(chats).toEqual(['why does parse fail']);

    page.webview.send({ type: 'newChat' });
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(remembered).toHaveLength(1); // the extension's own hook still runs
    expect(sent.at(-1)).toEqual({ uri: URI, line: 12, range: range(0, 40), thread: remembered[0] });
    chat.dispose();
  });
});

describe('contenox.anticipate.enabled', () => {
  it('is declared, on by default, and read as such', () => {
    const manifest = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const setting = manifest.contributes.configuration.properties[`contenox.${ANTICIPATE_SETTING}`];
    expect(setting).toMatchObject({ type: 'boolean', default: true });
    const config = (value: unknown) => ({ get: <T>(key: string): T | undefined =>
      (key === ANTICIPATE_SETTING ? value as T : undefined) });
    expect(readAnticipateEnabled(config(undefined))).toBe(true);
    expect(readAnticipateEnabled(config(false))).toBe(false);
    expect(readAnticipateEnabled(config('no'))).toBe(true);
  });
});

describe('the terminal feeds the tracker its failing runs', () => {
  /** A shell execution whose output the test writes, then ends. */
  function execution(command: string, cwd?: string) {
    const chunks: string[] = [];
    let finish: () => void = () => undefined;
    const ended = new Promise<void>((r) => { finish = r; });
    const exec: ShellExecution = {
      commandLine: { value: command },
      ...(cwd ? { cwd: mock.Uri.file(cwd) as unknown as vscode.Uri } : {}),
      read: async function* () {
        await ended;
        yield* chunks;
      },
    };
    return { exec, write: (s: string) => chunks.push(s), finish };
  }

  function follow(inWorkspace?: (cwd: vscode.Uri) => boolean) {
    const start = new mock.EventEmitter<{ execution: ShellExecution }>();
    const end = new mock.EventEmitter<{ execution: ShellExecution; exitCode: number | undefined }>();
    const seen: string[] = [];
    const events: ShellEvents = {
      onDidStartTerminalShellExecution: start.event as unknown as ShellEvents['onDidStartTerminalShellExecution'],
      onDidEndTerminalShellExecution: end.event as unknown as ShellEvents['onDidEndTerminalShellExecution'],
    };
    const runs = new TerminalRuns({ terminalChanged: (text) => seen.push(text) }, events, inWorkspace);
    const run = async (command: string, output: string, exitCode: number | undefined, cwd?: string) => {
      const e = execution(command, cwd);
      start.fire({ execution: e.exec });
      e.write(output);
      e.finish();
      await runs.ended(e.exec, exitCode); // (what the end event starts; awaited here)
    };
    return { runs, run, seen };
  }

  it('a failing command becomes the failing run, colour codes and shell marks removed; passing clears it', async () => {
    const { run, seen } = follow();
    await run('pytest -q tests/test_x.py', '\x1b]633;C\x07\x1b[31mF\x1b[0m\r\nE   assert 1 == 2\r\n1 failed\r\n', 1);
    expect(seen).toEqual(['$ pytest -q tests/test_x.py\nF\nE   assert 1 == 2\n1 failed']);
    await run('ls', 'a b c\n', 0); // another command passing: the failing run stays
    expect(seen).toHaveLength(1);
    await run('git status', 'fatal: not a git repository\n', undefined); // no exit code known: nothing said
    expect(seen).toHaveLength(1);
    await run('pytest -q tests/test_x.py', '1 passed\n', 0);
    expect(seen.at(-1)).toBe('');
  });

  it('a command run outside the workspace is not followed', async () => {
    const { run, seen } = follow((cwd) => cwd.fsPath.startsWith('/ws'));
    await run('make', 'boom\n', 2, '/elsewhere');
    expect(seen).toEqual([]);
    await run('make', 'boom\n', 2, '/ws/sub');
    expect(seen).toEqual(['$ make\nboom']);
  });

  it('a long output keeps its end, the cut said, between lines', () => {
    const output = Array.from({ length: 4000 }, (_, n) => `line ${n}`).join('\n');
    const text = failingRun('pytest', output, 2000);
    expect(text.length).toBeLessThanOrEqual(2000);
    expect(text.split('\n')[0]).toBe('$ pytest');
    expect(text.split('\n')[1]).toMatch(/^\[\.\.\. [\d,]+ characters of output cut \.\.\.\]$/);
    expect(text.split('\n')[2]).toMatch(/^line \d+$/);
    expect(text.endsWith('line 3999')).toBe(true);
    expect(plainTerminalText('a\x1b[1;32mb\x1b[0m\rc\r\n')).toBe('abc\n');
  });

  it('the failing run goes out with the place, and again when it clears', () => {
    const { t, timers, sent } = tracker();
    t.editorChanged(at(12));
    timers.advance(FOCUS_DEBOUNCE_MS);
    t.terminalChanged('$ pytest\nFAILED');
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.at(-1)).toEqual({ uri: URI, line: 12, range: range(0, 40), terminal: '$ pytest\nFAILED' });
    t.editorChanged(at(13)); // the same place: not resent, the run still with it
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent).toHaveLength(2);
    t.terminalChanged('');
    timers.advance(FOCUS_DEBOUNCE_MS);
    expect(sent.at(-1)).not.toHaveProperty('terminal');
    expect(shouldSendFocus({ uri: URI, line: 1, terminal: 'a' }, { uri: URI, line: 1, terminal: 'b' })).toBe(true);
  });

  it('is available only where VS Code reports shell executions', () => {
    expect(TerminalRuns.available({})).toBe(false);
    const e = new mock.EventEmitter<never>();
    expect(TerminalRuns.available({
      onDidStartTerminalShellExecution: e.event as unknown as ShellEvents['onDidStartTerminalShellExecution'],
      onDidEndTerminalShellExecution: e.event as unknown as ShellEvents['onDidEndTerminalShellExecution'],
    })).toBe(true);
  });
});
