import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { StatusBar } from '../../src/statusBar';
import { anticipationView, formatCacheHit, statusForError, statusView } from '../../src/statusView';
import { cacheStatus } from './fixtures';

// The mocked module exposes what was created.
const mock = vscode as unknown as typeof import('../mocks/vscode');

describe('formatCacheHit', () => {
  it('formats percentage and time to first token', () => {
    expect(formatCacheHit(cacheStatus())).toBe('92% cached · 0.4 s');
  });
  it('derives the percentage from token counts when hitPct is missing', () => {
    expect(formatCacheHit(cacheStatus({ hitPct: null, cachedTokens: 450, promptTokens: 900, ttftMs: null })))
      .toBe('50% cached');
  });
  it('uses whole seconds for slow turns', () => {
    expect(formatCacheHit(cacheStatus({ hitPct: 0, ttftMs: 12_600 }))).toBe('0% cached · 13 s');
  });
});

describe('statusView', () => {
  it('idle shows the cache hit without warning or spinner', () => {
    const v = statusView({ kind: 'cache', status: cacheStatus() });
    expect(v.text).toBe('$(database) 92% cached · 0.4 s');
    expect(v.warning).toBe(false);
    expect(v.busy).toBe(false);
    expect(v.tooltip).toContain('832 of 900 prompt tokens');
  });
  it.each(['indexing', 'prefill', 'decode'] as const)('%s spins', (state) => {
    const v = statusView({ kind: 'cache', status: cacheStatus({ state }) });
    expect(v.text.startsWith('$(sync~spin)')).toBe(true);
    expect(v.busy).toBe(true);
    expect(v.warning).toBe(false);
  });
  it('decode without counts yet says answering', () => {
    const v = statusView({ kind: 'cache', status: cacheStatus({ state: 'decode', promptTokens: 0, cachedTokens: 0, hitPct: 0 }) });
    expect(v.text).toBe('$(sync~spin) answering…');
  });
  it('before the first turn says so', () => {
    const v = statusView({ kind: 'cache', status: cacheStatus({ promptTokens: 0, cachedTokens: 0, hitPct: null }) });
    expect(v.text).toBe('$(database) no turn yet');
  });
  it('node down is a warning', () => {
    const v = statusView({ kind: 'down', detail: 'connection refused' });
    expect(v.warning).toBe(true);
    expect(v.text).toContain('node down');
    expect(v.tooltip).toContain('connection refused');
  });
  it('missing executable names the install command', () => {
    const v = statusView({ kind: 'missing', executable: 'contenox' });
    expect(v.warning).toBe(true);
    expect(v.tooltip).toContain('pipx install ./');
  });
  it('error state recognises a missing model', () => {
    const v = statusView({ kind: 'cache', status: cacheStatus({ state: 'error', message: 'model smollm2-135m is not installed' }) });
    expect(v.warning).toBe(true);
    expect(v.text).toContain('model missing');
    const other = statusView({ kind: 'cache', status: cacheStatus({ state: 'error', message: 'engine crashed' }) });
    expect(other.text).toBe('$(warning) Contenox: error');
  });
});

describe('statusForError', () => {
  it('maps model_not_found to the model-missing warning', () => {
    const input = statusForError({ code: -32002, message: 'model smollm2-135m is not installed' });
    expect(input).toEqual({ kind: 'modelMissing', detail: 'model smollm2-135m is not installed' });
    const v = statusView(input!);
    expect(v.warning).toBe(true);
    expect(v.text).toBe('$(warning) Contenox: model missing');
    expect(v.tooltip).toContain('contenox init');
  });
  it('maps node_unavailable to node down and ignores other errors', () => {
    expect(statusForError({ code: -32016, message: 'no socket' })).toEqual({ kind: 'down', detail: 'no socket' });
    expect(statusForError({ code: -32007, message: 'too long' })).toBeUndefined();
    expect(statusForError(new Error('x'))).toBeUndefined();
    expect(statusForError(undefined)).toBeUndefined();
  });
});

describe('StatusBar', () => {
  beforeEach(() => {
    mock.created.statusBarItems.length = 0;
  });
  it('drives a status bar item whose click opens explain-context', () => {
    const bar = new StatusBar();
    const item = mock.created.statusBarItems[0]!;
    expect(item.visible).toBe(true);
    expect(item.command).toBe('contenox.showExplainContext');
    expect(item.text).toContain('$(sync~spin)');

    bar.onCacheStatus(cacheStatus());
    expect(item.text).toBe('$(database) 92% cached · 0.4 s');
    expect(item.backgroundColor).toBeUndefined();

    bar.update({ kind: 'down' });
    expect(item.backgroundColor).toBeInstanceOf(mock.ThemeColor);
    expect((item.backgroundColor as unknown as InstanceType<typeof mock.ThemeColor>).id).toBe('statusBarItem.warningBackground');

    bar.onCacheStatus(cacheStatus({ state: 'prefill' }));
    expect(item.text).toBe('$(sync~spin) prefill…');
    // State-only updates keep the last turn's numbers.
    const empty = { cachedTokens: 0, newTokens: 0, promptTokens: 0, hitPct: 0, ttftMs: null };
    bar.onCacheStatus(cacheStatus({ ...empty, state: 'idle' }));
    expect(item.text).toBe('$(database) 92% cached · 0.4 s');
    bar.onCacheStatus(cacheStatus({ ...empty, state: 'idle', workspace: '/other' }));
    expect(item.text).toBe('$(database) no turn yet');
    expect(item.backgroundColor).toBeUndefined();
    bar.dispose();
    expect(item.disposed).toBe(true);
  });
});

describe('StatusBar keeps the last turn', () => {
  beforeEach(() => {
    mock.created.statusBarItems.length = 0;
  });
  const connected = cacheStatus({ workspace: '', cachedTokens: 0, newTokens: 0, promptTokens: 0, hitPct: null,
    ttftMs: null, state: 'idle' });

  it('shows the stored last turn again once connected after a window reload', () => {
    let stored: unknown;
    const store = { get: () => stored, set: (s: unknown) => { stored = s; } };
    const before = new StatusBar(store);
    before.onCacheStatus(cacheStatus({ state: 'prefill', promptTokens: 0, cachedTokens: 0, newTokens: 0 }));
    expect(stored).toBeUndefined(); // state-only updates are not a turn
    before.onCacheStatus(cacheStatus());
    expect(stored).toEqual(cacheStatus()); // the counts, idle
    before.dispose();

    const after = new StatusBar(store); // the reloaded window
    const item = mock.created.statusBarItems.at(-1)!;
    expect(item.text).toContain('$(sync~spin)'); // connecting
    after.onCacheStatus(connected);
    expect(item.text).toBe('$(database) 92% cached · 0.4 s');
    // The node's own idle for that workspace keeps it too; another workspace has none.
    after.onCacheStatus(cacheStatus({ ...connected, workspace: '/abs/root' }));
    expect(item.text).toBe('$(database) 92% cached · 0.4 s');
    after.onCacheStatus(cacheStatus({ ...connected, workspace: '/other' }));
    expect(item.text).toBe('$(database) no turn yet');
  });

  it('ignores a malformed stored status', () => {
    for (const bad of [null, 'x', { workspace: 1 }, cacheStatus({ promptTokens: 0 }), cacheStatus({ cachedTokens: -1 })]) {
      const bar = new StatusBar({ get: () => bad, set: () => undefined });
      bar.onCacheStatus(connected);
      expect(mock.created.statusBarItems.at(-1)!.text).toBe('$(database) no turn yet');
    }
  });

  it('New chat resets it to no turn yet and forgets the stored turn, but keeps a warning', () => {
    let stored: unknown;
    const bar = new StatusBar({ get: () => stored, set: (s) => { stored = s; } });
    const item = mock.created.statusBarItems.at(-1)!;
    bar.onCacheStatus(cacheStatus());
    bar.reset();
    expect(item.text).toBe('$(database) no turn yet');
    expect(stored).toBeUndefined();
    bar.onCacheStatus(cacheStatus({ ...connected, workspace: '/abs/root' }));
    expect(item.text).toBe('$(database) no turn yet');
    bar.update({ kind: 'down' });
    bar.reset();
    expect(item.text).toBe('$(warning) Contenox: node down');
  });
});

describe('anticipated context in the status item', () => {
  beforeEach(() => {
    mock.created.statusBarItems.length = 0;
  });
  const warm = { uri: 'file:///ws/src/parser.py', state: 'warm', tokens: 1840, text: 'warm for parser.py: 1,840 tokens prefilled' };

  it('anticipationView: warm and computing show, idle and off do not', () => {
    expect(anticipationView({ ...warm, state: 'warm' })).toEqual({
      suffix: '$(flame) warm: parser.py',
      tooltip: 'Anticipated context: warm for parser.py: 1,840 tokens prefilled (a question about it starts from the cache).',
    });
    expect(anticipationView({ uri: 'file:///ws/my%20lib.py', state: 'warm', tokens: 12_345, text: '' })!.tooltip)
      .toBe('Anticipated context: warm for my lib.py: 12,345 tokens prefilled (a question about it starts from the cache).');
    expect(anticipationView({ state: 'computing', tokens: 0, text: '' })).toEqual({
      suffix: '$(flame) warming…', tooltip: 'Anticipated context: prefilling the code around the cursor.' });
    expect(anticipationView({ uri: warm.uri, state: 'computing', tokens: 300, text: 'prefilling 300 tokens for parser.py' }))
      .toEqual({ suffix: '$(flame) warming: parser.py…', tooltip: 'Anticipated context: prefilling 300 tokens for parser.py.' });
    expect(anticipationView({ ...warm, state: 'idle' })).toBeNull();
    expect(anticipationView({ ...warm, state: 'off' })).toBeNull();
    expect(anticipationView(undefined)).toBeNull();
  });

  it('each state on the item: a suffix after the cache hit, cleared by idle / off and by the next turn', () => {
    const bar = new StatusBar();
    const item = mock.created.statusBarItems[0]!;
    bar.onCacheStatus(cacheStatus());
    const hit = '$(database) 92% cached · 0.4 s';

    bar.onAnticipation({ ...warm, state: 'computing', tokens: 0, text: '' });
    expect(item.text).toBe(`${hit} · $(flame) warming: parser.py…`);
    bar.onAnticipation(warm);
    expect(item.text).toBe(`${hit} · $(flame) warm: parser.py`);
    expect(item.tooltip).toContain('832 of 900 prompt tokens'); // the turn's tooltip stays
    expect(item.tooltip).toContain('\nAnticipated context: warm for parser.py: 1,840 tokens prefilled');
    bar.onAnticipation({ state: 'idle', tokens: 0, text: '' });
    expect(item.text).toBe(hit);
    expect(item.tooltip).not.toContain('Anticipated');

    bar.onAnticipation(warm);
    bar.onAnticipation({ state: 'off', tokens: 0, text: 'anticipation is off' });
    expect(item.text).toBe(hit);

    bar.onAnticipation(warm);
    bar.onAnticipation({ state: 'scorching' }); // malformed: ignored
    expect(item.text).toBe(`${hit} · $(flame) warm: parser.py`);
    // The next turn's status replaces it, and its end does not bring it back.
    bar.onCacheStatus(cacheStatus({ state: 'prefill' }));
    expect(item.text).toBe('$(sync~spin) prefill…');
    bar.onCacheStatus(cacheStatus());
    expect(item.text).toBe(hit);

    // No turn yet: it follows "no turn yet"; New chat clears it; a warning never carries it.
    bar.reset();
    bar.onAnticipation(warm);
    expect(item.text).toBe('$(database) no turn yet · $(flame) warm: parser.py');
    bar.reset();
    expect(item.text).toBe('$(database) no turn yet');
    bar.update({ kind: 'down' });
    bar.onAnticipation(warm);
    expect(item.text).toBe('$(warning) Contenox: node down');
  });
});
