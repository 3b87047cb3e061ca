import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import {
  CompletionToggle,
  DEFAULT_INLINE_SETTINGS,
  debounce,
  inlineCompletionMiddleware,
  readInlineSettings,
  toggleInlineCompletions,
  toggleView,
  type InlineSettings,
} from '../../src/inlineCompletions';
import type { CompletionInfo } from '../../src/protocol';

// The mocked module exposes what was created and the settings store.
const mock = vscode as unknown as typeof import('../mocks/vscode');

const NO_FIM: CompletionInfo = {
  available: false,
  reason: 'smollm2-135m has no fill-in-the-middle format',
  model: 'smollm2-135m',
};

beforeEach(() => {
  mock.settings.clear();
  mock.settingUpdates.length = 0;
  mock.created.statusBarItems.length = 0;
});

describe('readInlineSettings', () => {
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('contenox');

  it('defaults to enabled with a 150 ms debounce', () => {
    expect(readInlineSettings(config())).toEqual({ enabled: true, debounceMs: 150 });
    expect(DEFAULT_INLINE_SETTINGS).toEqual({ enabled: true, debounceMs: 150 });
  });
  it('reads the user values', () => {
    mock.settings.set('contenox.inlineCompletions.enable', false);
    mock.settings.set('contenox.inlineCompletions.debounceMs', 0);
    expect(readInlineSettings(config())).toEqual({ enabled: false, debounceMs: 0 });
  });
  it('gives a bad value its default and caps the debounce', () => {
    mock.settings.set('contenox.inlineCompletions.enable', 'yes');
    mock.settings.set('contenox.inlineCompletions.debounceMs', -5);
    expect(readInlineSettings(config())).toEqual({ enabled: true, debounceMs: 150 });
    mock.settings.set('contenox.inlineCompletions.debounceMs', Number.NaN);
    expect(readInlineSettings(config()).debounceMs).toBe(150);
    mock.settings.set('contenox.inlineCompletions.debounceMs', 60_000);
    expect(readInlineSettings(config()).debounceMs).toBe(5_000);
  });
});

describe('debounce', () => {
  beforeEach(() => { vi.useFakeTimers(); });
  afterEach(() => { vi.useRealTimers(); });

  it('resolves true once the time has passed', async () => {
    const source = new vscode.CancellationTokenSource();
    let settled: boolean | undefined;
    void debounce(150, source.token).then((v) => { settled = v; });
    await vi.advanceTimersByTimeAsync(149);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(true);
  });
  it('resolves false as soon as the token is cancelled', async () => {
    const source = new vscode.CancellationTokenSource();
    const waiting = debounce(150, source.token);
    await vi.advanceTimersByTimeAsync(50);
    source.cancel();
    expect(await waiting).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
  it('does not wait for zero or an already cancelled token', async () => {
    const source = new vscode.CancellationTokenSource();
    expect(await debounce(0, source.token)).toBe(true);
    source.cancel();
    expect(await debounce(150, source.token)).toBe(false);
  });
});

describe('inlineCompletionMiddleware', () => {
  const document = { uri: 'file:///ws/a.py' } as unknown as vscode.TextDocument;
  const position = new vscode.Position(1, 4) as unknown as vscode.Position;
  const ITEMS = [{ insertText: 'return a + b' }] as unknown as vscode.InlineCompletionItem[];
  const context = (triggerKind: number): vscode.InlineCompletionContext =>
    ({ triggerKind, selectedCompletionInfo: undefined }) as unknown as vscode.InlineCompletionContext;

  function harness(settings: InlineSettings) {
    const calls: unknown[][] = [];
    const next = (...args: unknown[]): vscode.InlineCompletionItem[] => {
      calls.push(args);
      return ITEMS;
    };
    const middleware = inlineCompletionMiddleware(() => settings);
    const source = new vscode.CancellationTokenSource();
    const token = source.token as vscode.CancellationToken;
    const provide = (trigger: number): ReturnType<typeof middleware> =>
      middleware(document, position, context(trigger), token, next);
    return { calls, source, provide };
  }

  beforeEach(() => { vi.useFakeTimers(); });
  afterEach(() => { vi.useRealTimers(); });

  it('returns no items and asks nothing while disabled', async () => {
    const { calls, provide } = harness({ enabled: false, debounceMs: 150 });
    expect(await provide(mock.InlineCompletionTriggerKind.Automatic)).toEqual([]);
    expect(calls).toEqual([]);
  });
  it('asks the node after the debounce, with the same arguments', async () => {
    const { calls, provide } = harness({ enabled: true, debounceMs: 150 });
    const result = provide(mock.InlineCompletionTriggerKind.Automatic);
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(50);
    expect(await result).toBe(ITEMS);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.slice(0, 2)).toEqual([document, position]);
  });
  it('drops a request the user typed past', async () => {
    const { calls, source, provide } = harness({ enabled: true, debounceMs: 150 });
    const result = provide(mock.InlineCompletionTriggerKind.Automatic);
    await vi.advanceTimersByTimeAsync(20);
    source.cancel();
    expect(await result).toEqual([]);
    await vi.advanceTimersByTimeAsync(500);
    expect(calls).toEqual([]);
  });
  it('asks at once on an explicit trigger', async () => {
    const { calls, provide } = harness({ enabled: true, debounceMs: 5_000 });
    expect(await provide(mock.InlineCompletionTriggerKind.Invoke)).toBe(ITEMS);
    expect(calls).toHaveLength(1);
  });
});

describe('toggleView', () => {
  it('says on, with the model when the node named it', () => {
    expect(toggleView(true, undefined).text).toBe('$(sparkle) Contenox: completions on');
    const v = toggleView(true, { available: true, reason: null, model: 'qwen2.5-coder-0.5b' });
    expect(v.text).toBe('$(sparkle) Contenox: completions on');
    expect(v.tooltip).toContain('from qwen2.5-coder-0.5b');
  });
  it('says off whatever the node said', () => {
    expect(toggleView(false, NO_FIM).text).toBe('$(sparkle) Contenox: completions off');
    expect(toggleView(false, undefined).tooltip).toContain('Click to turn them on');
  });
  it('says unavailable with the node\'s reason', () => {
    const v = toggleView(true, NO_FIM);
    expect(v.text).toBe('$(sparkle) Contenox: completions unavailable');
    expect(v.tooltip).toContain('smollm2-135m has no fill-in-the-middle format');
    expect(toggleView(true, { ...NO_FIM, reason: null }).tooltip).toContain('smollm2-135m has no fill-in-the-middle');
  });
});

describe('CompletionToggle', () => {
  it('drives a status bar item whose click runs the toggle command', async () => {
    const toggle = new CompletionToggle();
    const item = mock.created.statusBarItems[0]!;
    expect(item.id).toBe('contenox.completions');
    expect(item.visible).toBe(true);
    expect(item.command).toBe('contenox.toggleInlineCompletions');
    expect(item.text).toBe('$(sparkle) Contenox: completions on');

    await toggle.query(async () => NO_FIM);
    expect(item.text).toBe('$(sparkle) Contenox: completions unavailable');
    expect(item.tooltip).toContain('no fill-in-the-middle format');

    toggle.reset();
    expect(item.text).toBe('$(sparkle) Contenox: completions on');
    toggle.dispose();
    expect(item.disposed).toBe(true);
  });
  it('leaves the state unknown when the node cannot answer', async () => {
    const toggle = new CompletionToggle();
    await toggle.query(async () => NO_FIM);
    expect((await toggle.query(async () => { throw new Error('method not found'); })).text)
      .toBe('$(sparkle) Contenox: completions on');
    expect((await toggle.query(async () => ({ nonsense: true }))).text).toBe('$(sparkle) Contenox: completions on');
  });
  it('toggleInlineCompletions flips the user setting and the item follows on refresh', async () => {
    const toggle = new CompletionToggle();
    expect(await toggleInlineCompletions()).toBe(false);
    expect(mock.settingUpdates).toEqual([
      { key: 'contenox.inlineCompletions.enable', value: false, target: mock.ConfigurationTarget.Global },
    ]);
    expect(toggle.refresh().text).toBe('$(sparkle) Contenox: completions off');
    expect(await toggleInlineCompletions()).toBe(true);
    expect(toggle.refresh().text).toBe('$(sparkle) Contenox: completions on');
  });
});
