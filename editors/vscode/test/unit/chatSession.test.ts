import { describe, expect, it } from 'vitest';
import type * as vscode from 'vscode';
import { ChatSession, resultToAnswer, type ChatBackend } from '../../src/chatSession';
import { isToWebview, type ChatParams, type ChatResult, type ToWebview } from '../../src/protocol';
import { EXPLAIN } from './fixtures';

interface Pending { params: ChatParams; token: vscode.CancellationToken; resolve(r: ChatResult): void; reject(e: unknown): void }

function harness() {
  const posted: ToWebview[] = [];
  const pending: Pending[] = [];
  const commands: { command: string; args: unknown[] }[] = [];
  const backend: ChatBackend = {
    chat: (params, token) => new Promise((resolve, reject) => {
      pending.push({ params, token, resolve, reject });
      // Like vscode-jsonrpc: a cancelled request is answered with RequestCancelled by the server.
      token.onCancellationRequested(() => reject(Object.assign(new Error('cancelled'), { code: -32800 })));
    }),
    executeCommand: async (command, args) => {
      commands.push({ command, args });
      return { text: 'explained', explain: EXPLAIN };
    },
    explainContext: async () => EXPLAIN,
  };
  const session = new ChatSession(backend, (m) => posted.push(m));
  return { session, posted, pending, commands, backend };
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

describe('ChatSession', () => {
  it('queues messages until the page is ready', async () => {
    const { session, posted } = harness();
    void session.showExplain();
    await tick();
    expect(posted).toEqual([]);
    await session.handleMessage({ type: 'ready' });
    expect(posted).toEqual([{ type: 'explain', explain: EXPLAIN }]);
  });

  it('streams chunks for its chat and finishes with the explain table data', async () => {
    const { session, posted, pending } = harness();
    await session.handleMessage({ type: 'ready' });
    const done = session.handleMessage({ type: 'send', prompt: 'what is this?' });
    await tick();
    expect(pending).toHaveLength(1);
    const { chatId, prompt } = pending[0]!.params;
    expect(prompt).toBe('what is this?');
    session.onChunk({ chatId, text: 'Hel' });
    session.onChunk({ chatId: 'someone-else', text: 'ignored' });
    const step = { id: 'step1-0', kind: 'read' as const, title: 'Read a.py', status: 'completed' as const, output: '1 a' };
    session.onTool({ chatId, ...step, locations: [{ path: '/ws/a.py', line: null }] });
    session.onTool({ chatId: 'someone-else', ...step, locations: [] });
    session.onChunk({ chatId, text: 'lo' });
    pending[0]!.resolve({ text: 'Hello', explain: EXPLAIN });
    await done;
    expect(posted).toEqual([
      { type: 'start', chatId, prompt: 'what is this?' },
      { type: 'chunk', chatId, text: 'Hel' },
      { type: 'tool', chatId, tool: step },
      { type: 'chunk', chatId, text: 'lo' },
      { type: 'done', chatId, text: 'Hello', explain: EXPLAIN },
    ]);
    expect(session.activeChats).toEqual([]);
  });

  it('stop cancels the request and reports cancelled, dropping late chunks', async () => {
    const { posted, pending, backend } = harness();
    const errors: unknown[] = [];
    const session = new ChatSession(backend, (m) => posted.push(m), (e) => errors.push(e));
    await session.handleMessage({ type: 'ready' });
    const done = session.handleMessage({ type: 'send', prompt: 'long one' });
    await tick();
    const p = pending[0]!;
    session.onChunk({ chatId: p.params.chatId, text: 'part' });
    await session.handleMessage({ type: 'stop', chatId: p.params.chatId });
    expect(p.token.isCancellationRequested).toBe(true);
    session.onChunk({ chatId: p.params.chatId, text: 'late' });
    await done;
    expect(posted.map((m) => m.type)).toEqual(['start', 'chunk', 'cancelled']);
    expect(errors).toEqual([]); // a cancel is an outcome, not an error
  });

  it('reports server errors on the answer and to the error hook', async () => {
    const { posted, pending, backend } = harness();
    const errors: unknown[] = [];
    const session = new ChatSession(backend, (m) => posted.push(m), (e) => errors.push(e));
    await session.handleMessage({ type: 'ready' });
    const done = session.handleMessage({ type: 'send', prompt: 'x' });
    await tick();
    pending[0]!.reject(Object.assign(new Error('model smollm2-135m is not installed'), { code: -32603 }));
    await done;
    expect(posted.at(-1)).toEqual({ type: 'error', chatId: pending[0]!.params.chatId, message: 'model smollm2-135m is not installed' });
    expect(errors).toHaveLength(1);
    expect((errors[0] as { code: number }).code).toBe(-32603);
  });

  it('ignores malformed messages from the page', async () => {
    const { session, posted, pending } = harness();
    await session.handleMessage({ type: 'ready' });
    await session.handleMessage({ type: 'send' });
    await session.handleMessage({ type: 'eval', code: '1' });
    await session.handleMessage('send');
    await session.handleMessage(null);
    expect(pending).toEqual([]);
    expect(posted).toEqual([]);
  });

  it('runs code-action commands into the panel with a chatId for streaming', async () => {
    const { session, posted, commands } = harness();
    await session.handleMessage({ type: 'ready' });
    const range = { start: { line: 1, character: 0 }, end: { line: 3, character: 0 } };
    await session.runCommand('Explain selection', 'contenox.explainSelection', [{ uri: 'file:///a.py', range }]);
    expect(commands).toHaveLength(1);
    const arg = commands[0]!.args[0] as { uri: string; chatId: string };
    expect(arg.uri).toBe('file:///a.py');
    expect(arg.chatId).toMatch(/^chat-/);
    expect(posted).toEqual([
      { type: 'start', chatId: arg.chatId, prompt: 'Explain selection' },
      { type: 'done', chatId: arg.chatId, text: 'explained', explain: EXPLAIN },
    ]);
  });
});

describe('resultToAnswer', () => {
  it('passes chat-shaped results through', () => {
    expect(resultToAnswer({ text: 't', explain: EXPLAIN })).toEqual({ text: 't', explain: EXPLAIN });
  });
  it('lists related-code hits', () => {
    const a = resultToAnswer([{ path: 'src/a.py', line: 4, name: 'parse' }, { path: 'b.py' }]);
    expect(a.text).toBe('- `src/a.py:4` parse\n- `b.py`');
    const b = resultToAnswer({ related: [{ kind: 'definition', name: 'parse', path: 'src/a.py', line: 4 }] });
    expect(b.text).toBe('- `src/a.py:4` parse (definition)');
  });
  it('falls back to streamed text or JSON', () => {
    expect(resultToAnswer(null, 'streamed')).toEqual({ text: 'streamed', explain: null });
    expect(resultToAnswer({ ok: true }).text).toContain('"ok": true');
  });
});

describe('ChatSession proposed edits', () => {
  const EDIT = {
    path: 'util.py', uri: 'file:///ws/util.py', diff: '--- a/util.py\n+++ b/util.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n',
    oldText: 'x = 1\n', newText: 'x = 2\n',
  };

  async function answered(apply: (e: unknown) => Promise<string | null>) {
    const { posted, pending, backend } = harness();
    const session = new ChatSession(backend, (m) => posted.push(m), () => undefined, async () => undefined, apply);
    await session.handleMessage({ type: 'ready' });
    const done = session.handleMessage({ type: 'send', prompt: 'fix it' });
    await tick();
    const chatId = pending[0]!.params.chatId;
    pending[0]!.resolve({ text: 'Fixed', explain: EXPLAIN, edits: [EDIT, { path: '../evil', uri: 'x' } as never],
      editProblems: ['edit block 2: its search lines are not in a.py'] });
    await done;
    return { session, posted, chatId };
  }

  it('shows well-formed edits with the problems and applies one once', async () => {
    const applied: unknown[] = [];
    const { session, posted, chatId } = await answered(async (e) => { applied.push(e); return null; });
    expect(posted.at(-1)).toEqual({
      type: 'done', chatId, text: 'Fixed', explain: EXPLAIN,
      edits: [{ path: 'util.py', diff: EDIT.diff, isNew: false }],
      problems: ['edit block 2: its search lines are not in a.py'],
    });
    await session.handleMessage({ type: 'applyEdit', chatId, index: 0 });
    await session.handleMessage({ type: 'applyEdit', chatId, index: 0 });
    await session.handleMessage({ type: 'applyEdit', chatId, index: 1 });
    expect(applied).toEqual([EDIT]);
    expect(posted.at(-1)).toEqual({ type: 'editResult', chatId, index: 0, status: 'applied' });
  });

  it('reports a refused apply and a rejection without applying', async () => {
    const { session, posted, chatId } = await answered(async () => 'util.py changed since the edit was proposed');
    await session.handleMessage({ type: 'applyEdit', chatId, index: 0 });
    expect(posted.at(-1)).toEqual({ type: 'editResult', chatId, index: 0, status: 'failed',
      message: 'util.py changed since the edit was proposed' });
    const other = await answered(async () => { throw new Error('must not apply'); });
    await other.session.handleMessage({ type: 'rejectEdit', chatId: other.chatId, index: 0 });
    expect(other.posted.at(-1)).toEqual({ type: 'editResult', chatId: other.chatId, index: 0, status: 'rejected' });
  });
});

describe('ChatSession verified fixes', () => {
  const VERIFIED = { status: 'passed' as const, summary: 'verified: `pytest -q` passed (2 of 4 candidates); ' +
    '0 repair round(s); decode 3.0 s, apply 0.1 s, check 2.2 s', command: 'pytest -q', candidates: 4, passed: 2, chosen: 2 };
  const EDIT = {
    path: 'util.py', uri: 'file:///ws/util.py', diff: '--- a/util.py\n+++ b/util.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n',
    oldText: 'x = 1\n', newText: 'x = 2\n',
  };

  async function answer(result: Record<string, unknown>, steps: (chatId: string, session: ChatSession) => void = () => undefined) {
    const { session, posted, pending } = harness();
    await session.handleMessage({ type: 'ready' });
    const done = session.handleMessage({ type: 'send', prompt: 'fix the failing test' });
    await tick();
    const chatId = pending[0]!.params.chatId;
    steps(chatId, session);
    pending[0]!.resolve({ text: 'Fixed', explain: EXPLAIN, ...result } as ChatResult);
    await done;
    return { posted, chatId };
  }

  it('shows the check runs as steps and the verdict with the diffs', async () => {
    const run = { id: 'verify-1', kind: 'execute' as const, title: 'check candidate 1 (util.py): pytest -q' };
    const { posted, chatId } = await answer({ edits: [EDIT], editProblems: [], verification: VERIFIED }, (id, session) => {
      session.onTool({ chatId: id, ...run, status: 'in_progress', output: '', locations: [{ path: '/ws/util.py', line: null }] });
      session.onTool({ chatId: id, ...run, status: 'failed', output: 'exit code 1\n1 failed', locations: [] });
    });
    expect(posted.slice(1)).toEqual([
      { type: 'tool', chatId, tool: { ...run, status: 'in_progress', output: '' } },
      { type: 'tool', chatId, tool: { ...run, status: 'failed', output: 'exit code 1\n1 failed' } },
      { type: 'done', chatId, text: 'Fixed', explain: EXPLAIN, edits: [{ path: 'util.py', diff: EDIT.diff, isNew: false }],
        verification: VERIFIED },
    ]);
    expect(posted.every((m) => isToWebview(m))).toBe(true);
  });

  it('drops a malformed verification and keeps none when the turn did not verify', async () => {
    const malformed = await answer({ edits: [EDIT], verification: { ...VERIFIED, status: 'verified' } });
    expect(malformed.posted.at(-1)).toEqual({ type: 'done', chatId: malformed.chatId, text: 'Fixed', explain: EXPLAIN,
      edits: [{ path: 'util.py', diff: EDIT.diff, isNew: false }] });
    const none = await answer({ verification: null });
    expect(none.posted.at(-1)).toEqual({ type: 'done', chatId: none.chatId, text: 'Fixed', explain: EXPLAIN });
    const skipped = { ...VERIFIED, status: 'skipped' as const, summary: 'not verified: no check command', command: '',
      candidates: 0, passed: 0, chosen: null };
    const noEdit = await answer({ verification: skipped, extra: 1 });
    expect(noEdit.posted.at(-1)).toEqual({ type: 'done', chatId: noEdit.chatId, text: 'Fixed', explain: EXPLAIN,
      verification: skipped });
  });

  it('keeps the verification of a server command result', () => {
    expect(resultToAnswer({ text: 't', explain: null, verification: VERIFIED })).toEqual(
      { text: 't', explain: null, verification: VERIFIED });
    expect(resultToAnswer({ text: 't', explain: null, verification: { status: 'passed' } })).toEqual(
      { text: 't', explain: null });
  });
});

describe('ChatSession truncated answers', () => {
  it('marks an answer cut at the length limit', async () => {
    const { session, posted, pending } = harness();
    await session.handleMessage({ type: 'ready' });
    const done = session.handleMessage({ type: 'send', prompt: 'long one' });
    await tick();
    const chatId = pending[0]!.params.chatId;
    pending[0]!.resolve({ text: 'partial', explain: EXPLAIN, finishReason: 'length' });
    await done;
    expect(posted.at(-1)).toEqual({ type: 'done', chatId, text: 'partial', explain: EXPLAIN, truncated: true });
  });
});

describe('ChatSession threads', () => {
  it('asks in the panel thread until New chat starts another, which clears the page', async () => {
    const { session, posted, pending, commands } = harness();
    await session.handleMessage({ type: 'ready' });
    const first = session.handleMessage({ type: 'send', prompt: 'one' });
    await tick();
    expect(pending[0]!.params.thread).toBe('panel');
    pending[0]!.resolve({ text: 'a', explain: EXPLAIN });
    await first;
    await session.handleMessage({ type: 'newChat' });
    expect(posted.at(-1)).toEqual({ type: 'cleared' });
    const second = session.handleMessage({ type: 'send', prompt: 'two' });
    await tick();
    const thread = pending[1]!.params.thread;
    expect(thread).toMatch(/^panel-[0-9a-z]+$/);
    pending[1]!.resolve({ text: 'b', explain: EXPLAIN });
    await second;
    await session.runCommand('Explain selection', 'contenox.explainSelection', [{ uri: 'file:///ws/a.py' }]);
    expect((commands.at(-1)!.args[0] as { thread: string }).thread).toBe(thread);
  });
});

describe('ChatSession restores its thread', () => {
  it('shows a question the node holds no answer for where it was asked, with why', async () => {
    const { posted, backend } = harness();
    backend.history = async () => [
      { turn: 0, user: 'Fix add', answer: '', unanswered: 'stopped before the answer was finished' },
      { turn: 1, user: 'What is add?', answer: 'It adds.' },
      { turn: 0, user: 'And sub?', answer: '', unanswered: 'cut off: the node went away before the answer was finished' },
    ];
    const session = new ChatSession(backend, (m) => posted.push(m));
    await session.handleMessage({ type: 'ready' });
    expect(posted).toEqual([
      { type: 'start', chatId: 'restored-panel-unanswered-1', prompt: 'Fix add' },
      { type: 'error', chatId: 'restored-panel-unanswered-1', message: 'No answer: stopped before the answer was finished' },
      { type: 'start', chatId: 'restored-panel-1', prompt: 'What is add?' },
      { type: 'done', chatId: 'restored-panel-1', text: 'It adds.', explain: null },
      { type: 'start', chatId: 'restored-panel-unanswered-2', prompt: 'And sub?' },
      { type: 'error', chatId: 'restored-panel-unanswered-2',
        message: 'No answer: cut off: the node went away before the answer was finished' },
    ]);
  });

  it('shows the recorded turns when the page opens or reloads, for the thread in use', async () => {
    const { posted, backend } = harness();
    const asked: string[] = [];
    backend.history = async (thread) => {
      asked.push(thread);
      return thread === 'panel' ? [{ turn: 1, user: 'What is add?', answer: 'It adds.' }] : [];
    };
    const session = new ChatSession(backend, (m) => posted.push(m));
    await session.handleMessage({ type: 'ready' });
    const shown = [
      { type: 'start', chatId: 'restored-panel-1', prompt: 'What is add?' },
      { type: 'done', chatId: 'restored-panel-1', text: 'It adds.', explain: null },
    ];
    expect(posted).toEqual(shown);
    session.resetPage();
    await session.handleMessage({ type: 'ready' });
    expect(posted).toEqual([...shown, ...shown]);
    await session.handleMessage({ type: 'newChat' });
    session.resetPage();
    await session.handleMessage({ type: 'ready' });
    expect(asked).toEqual(['panel', 'panel', session.thread]);
    expect(posted.at(-1)).toEqual({ type: 'cleared' });
  });
});

describe('ChatSession switches threads', () => {
  it('opens a picked thread: the page is cleared, shows its turns, and the next question continues it', async () => {
    const { posted, backend, pending } = harness();
    backend.history = async (thread) =>
      thread === 'panel-old' ? [{ turn: 3, user: 'Where is sub?', answer: 'calc.py' }] : [];
    const session = new ChatSession(backend, (m) => posted.push(m));
    const remembered: string[] = [];
    session.rememberThread = (thread) => remembered.push(thread);
    await session.handleMessage({ type: 'ready' });
    const running = session.handleMessage({ type: 'send', prompt: 'slow one' });
    await tick();
    await session.openThread('panel-old');
    await running;
    expect(remembered).toEqual(['panel-old']); // kept for the next window
    await session.handleMessage({ type: 'newChat' });
    expect(remembered).toEqual(['panel-old', session.thread]);
    await session.openThread('panel-old');
    expect(pending[0]!.token.isCancellationRequested).toBe(true); // what ran in the other thread stopped
    expect(posted.filter((m) => m.type !== 'cancelled').slice(-3)).toEqual([
      { type: 'cleared' },
      { type: 'start', chatId: 'restored-panel-old-3', prompt: 'Where is sub?' },
      { type: 'done', chatId: 'restored-panel-old-3', text: 'calc.py', explain: null },
    ]);
    const next = session.handleMessage({ type: 'send', prompt: 'and add?' });
    await tick();
    expect(pending[1]!.params.thread).toBe('panel-old');
    pending[1]!.resolve({ text: 'calc.py too', explain: EXPLAIN });
    await next;
  });

  it('before the page is ready the picked thread is shown once it is', async () => {
    const { posted, backend } = harness();
    backend.history = async (thread) => [{ turn: 1, user: `q in ${thread}`, answer: 'a' }];
    const session = new ChatSession(backend, (m) => posted.push(m));
    void session.showExplain(); // queued for the page of the old thread: dropped by the switch
    await tick();
    await session.openThread('cli');
    expect(posted).toEqual([]);
    await session.handleMessage({ type: 'ready' });
    expect(posted).toEqual([
      { type: 'start', chatId: 'restored-cli-1', prompt: 'q in cli' },
      { type: 'done', chatId: 'restored-cli-1', text: 'a', explain: null },
    ]);
  });
});

describe('ChatSession code block actions', () => {
  it('copies and inserts through the host and says when the insert could not happen', async () => {
    const { backend } = harness();
    const posted: ToWebview[] = [];
    const did: string[] = [];
    let insertProblem: string | null = null;
    const session = new ChatSession(backend, (m) => posted.push(m), undefined, undefined, undefined, {
      copy: async (text) => { did.push(`copy:${text}`); },
      insert: async (text) => { did.push(`insert:${text}`); return insertProblem; },
      apply: async (block) => { did.push(`apply:${block.text}`); return null; },
    });
    await session.handleMessage({ type: 'ready' });
    await session.handleMessage({ type: 'copyCode', text: 'def f():\n    pass' });
    await session.handleMessage({ type: 'insertCode', text: 'x = 1' });
    expect(did).toEqual(['copy:def f():\n    pass', 'insert:x = 1']);
    expect(posted).toEqual([]);
    insertProblem = 'open a file to insert the code into';
    await session.handleMessage({ type: 'insertCode', text: 'y' });
    expect(posted).toEqual([{ type: 'error', message: 'Could not insert the code: open a file to insert the code into' }]);
    await session.handleMessage({ type: 'copyCode', text: 'z'.repeat(1_000_001) }); // over the cap: ignored
    expect(did).toHaveLength(3);
  });

  it('applies through the host and says why an apply did not happen', async () => {
    const { backend } = harness();
    const posted: ToWebview[] = [];
    const applied: string[] = [];
    const session = new ChatSession(backend, (m) => posted.push(m), undefined, undefined, undefined, {
      copy: async () => undefined,
      insert: async () => null,
      apply: async (block) => { applied.push(block.text); return applied.length > 1 ? 'a.py changed during the preview; apply again' : null; },
    });
    await session.handleMessage({ type: 'ready' });
    await session.handleMessage({ type: 'applyCode', text: 'x = 2' });
    expect(posted).toEqual([]);
    await session.handleMessage({ type: 'applyCode', text: 'x = 3' });
    expect(applied).toEqual(['x = 2', 'x = 3']);
    expect(posted).toEqual([{ type: 'error', message: 'Could not apply the code: a.py changed during the preview; apply again' }]);
  });
});

describe('ChatSession progress and how an answer stopped', () => {
  it('shows the prefill progress in the pending answer until its first token', async () => {
    const { session, posted, pending } = harness();
    await session.handleMessage({ type: 'ready' });
    const done = session.handleMessage({ type: 'send', prompt: 'q' });
    await tick();
    const chatId = pending[0]!.params.chatId;
    session.onProgress({ chatId, state: 'indexing', text: '', done: 0, total: 0 });
    session.onProgress({ chatId, state: 'prefill', text: '3,840 of 4,699 new prompt tokens computed (0% of 4,699 cached)',
      done: 3840, total: 4699 });
    session.onProgress({ chatId: 'someone-else', state: 'prefill', text: 'x', done: 1, total: 2 });
    session.onChunk({ chatId, text: 'Hi' });
    session.onProgress({ chatId, state: 'decode', text: '', done: 0, total: 0 }); // the answer streams: no more
    pending[0]!.resolve({ text: 'Hi', explain: EXPLAIN, finishReason: 'repetition' });
    await done;
    expect(posted.filter((m) => m.type === 'progress')).toEqual([
      { type: 'progress', chatId, text: 'indexing the workspace…' },
      { type: 'progress', chatId, text: '3,840 of 4,699 new prompt tokens computed (0% of 4,699 cached)' },
    ]);
    expect(posted.every((m) => isToWebview(m))).toBe(true);
    expect(posted.at(-1)).toEqual({ type: 'done', chatId, text: 'Hi', explain: EXPLAIN, repeated: true });
  });

  it("sends a code block's Apply with its heading, question and language", async () => {
    const { backend } = harness();
    const blocks: unknown[] = [];
    const session = new ChatSession(backend, () => undefined, undefined, undefined, undefined, {
      copy: async () => undefined, insert: async () => null,
      apply: async (block) => { blocks.push(block); return null; },
    });
    await session.handleMessage({ type: 'ready' });
    await session.handleMessage({ type: 'applyCode', text: 'x', heading: 'In `a.py`:', question: 'q?', lang: 'python' });
    await session.handleMessage({ type: 'applyCode', text: 'y', heading: 'two\nlines' }); // refused by the guard
    expect(blocks).toEqual([{ text: 'x', heading: 'In `a.py`:', question: 'q?', lang: 'python' }]);
  });

  it('resolves a block through the backend when it can', async () => {
    const { backend } = harness();
    const asked: unknown[] = [];
    backend.resolveBlock = async (params) => { asked.push(params); return { edits: [], problems: ['nope'], candidates: [] }; };
    const posted: ToWebview[] = [];
    const session = new ChatSession(backend, (m) => posted.push(m));
    await session.handleMessage({ type: 'ready' });
    await session.handleMessage({ type: 'applyCode', text: 'x = 1', heading: 'util.py' });
    expect(asked).toEqual([expect.objectContaining({ text: 'x = 1', heading: 'util.py' })]);
    expect(posted).toEqual([{ type: 'error', message: 'Could not apply the code: nope' }]);
  });
});

describe('ChatSession keeps what the history does not', () => {
  const explain4 = { ...EXPLAIN, turn: 4 };

  it('switching back to a thread shows its explain lines and stop notes again', async () => {
    const { posted, backend, pending } = harness();
    const recorded: { turn: number; user: string; answer: string }[] = [];
    backend.history = async (thread) => (thread === 'panel' ? recorded : []);
    const session = new ChatSession(backend, (m) => posted.push(m));
    await session.handleMessage({ type: 'ready' });
    const asked = session.handleMessage({ type: 'send', prompt: 'long?' });
    await tick();
    pending[0]!.resolve({ text: 'cut here', explain: explain4, finishReason: 'length' });
    await asked;
    recorded.push({ turn: 4, user: 'long?', answer: 'cut here' }); // what the node journals
    await session.openThread('panel-other');
    await session.openThread('panel');
    expect(posted.slice(-2)).toEqual([
      { type: 'start', chatId: 'restored-panel-4', prompt: 'long?' },
      { type: 'done', chatId: 'restored-panel-4', text: 'cut here', explain: explain4, truncated: true },
    ]);
  });

  it("prefers the node's explain and finish reason when its history sends them", async () => {
    const { posted, backend } = harness();
    backend.history = async () => [{ turn: 3, user: 'q', answer: 'a a a', explain: EXPLAIN, finishReason: 'repetition' },
      { turn: 5, user: 'q2', answer: 'b', explain: { bad: true } }];
    const session = new ChatSession(backend, (m) => posted.push(m));
    session.turnNotes.set('panel', 3, { explain: explain4 });
    await session.handleMessage({ type: 'ready' });
    expect(posted).toEqual([
      { type: 'start', chatId: 'restored-panel-3', prompt: 'q' },
      { type: 'done', chatId: 'restored-panel-3', text: 'a a a', explain: EXPLAIN, repeated: true },
      { type: 'start', chatId: 'restored-panel-5', prompt: 'q2' },
      { type: 'done', chatId: 'restored-panel-5', text: 'b', explain: null },
    ]);
  });

  it('New chat tells its hook (the status item resets)', async () => {
    const { session } = harness();
    let resets = 0;
    session.onNewChat = () => { resets += 1; };
    await session.handleMessage({ type: 'ready' });
    await session.handleMessage({ type: 'newChat' });
    expect(resets).toBe(1);
    await session.openThread('other');
    expect(resets).toBe(1);
  });

  it('keeps what the page shows since it was cleared, for a page that opens later', async () => {
    const { session, pending } = harness();
    await session.handleMessage({ type: 'ready' });
    const asked = session.handleMessage({ type: 'send', prompt: 'q' });
    await tick();
    const { chatId } = pending[0]!.params;
    session.onProgress({ chatId, state: 'prefill', text: '1 of 2 new prompt tokens computed', done: 1, total: 2 });
    session.onChunk({ chatId, text: 'a' });
    pending[0]!.resolve({ text: 'a', explain: null });
    await asked;
    expect(session.transcript.map((m) => m.type)).toEqual(['start', 'chunk', 'done']); // no progress lines
    await session.handleMessage({ type: 'newChat' });
    expect(session.transcript).toEqual([]);
    session.resetPage();
    expect(session.isReady).toBe(false);
  });
});
