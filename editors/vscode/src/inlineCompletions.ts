// Inline (ghost-text) completions. vscode-languageclient registers the provider itself when the node
// advertises `inlineCompletionProvider`; this module holds the settings, the middleware that gates and
// debounces each `textDocument/inlineCompletion` request, and the status bar item that toggles them.

import * as vscode from 'vscode';
import type { Middleware } from 'vscode-languageclient/node';
import { toCompletionInfo, type CompletionInfo } from './protocol';

export const TOGGLE_COMMAND = 'contenox.toggleInlineCompletions';

/** Keys of the `contenox` configuration section. */
export const InlineSettingKeys = {
  enable: 'inlineCompletions.enable',
  debounceMs: 'inlineCompletions.debounceMs',
} as const;

export interface InlineSettings { enabled: boolean; debounceMs: number }

export const DEFAULT_INLINE_SETTINGS: InlineSettings = { enabled: true, debounceMs: 150 };
const MAX_DEBOUNCE_MS = 5_000;

/** The inline-completion settings of the `contenox` section; a bad value gets its default. */
export function readInlineSettings(config: Pick<vscode.WorkspaceConfiguration, 'get'>): InlineSettings {
  const enabled = config.get<unknown>(InlineSettingKeys.enable);
  const debounceMs = config.get<unknown>(InlineSettingKeys.debounceMs);
  return {
    enabled: typeof enabled === 'boolean' ? enabled : DEFAULT_INLINE_SETTINGS.enabled,
    debounceMs: typeof debounceMs === 'number' && Number.isFinite(debounceMs) && debounceMs >= 0
      ? Math.min(debounceMs, MAX_DEBOUNCE_MS)
      : DEFAULT_INLINE_SETTINGS.debounceMs,
  };
}

/** Resolves true after `ms`, or false as soon as `token` is cancelled (at once when it already is). */
export function debounce(ms: number, token: vscode.CancellationToken): Promise<boolean> {
  if (token.isCancellationRequested) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    let listener: vscode.Disposable | undefined;
    const timer = setTimeout(() => {
      listener?.dispose();
      resolve(!token.isCancellationRequested);
    }, ms);
    listener = token.onCancellationRequested(() => {
      clearTimeout(timer);
      listener?.dispose();
      resolve(false);
    });
  });
}

type ProvideInlineCompletionItems = NonNullable<Middleware['provideInlineCompletionItems']>;

/**
 * The language client's `provideInlineCompletionItems` middleware: no items while disabled; an automatic
 * trigger first waits `debounceMs` and asks the node only if VS Code has not cancelled it meanwhile (the
 * user typed on). An explicit trigger (Trigger Inline Suggestion) asks at once.
 */
export function inlineCompletionMiddleware(settings: () => InlineSettings): ProvideInlineCompletionItems {
  return async (document, position, context, token, next) => {
    const { enabled, debounceMs } = settings();
    if (!enabled) return [];
    const wait = context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke ? 0 : debounceMs;
    if (!(await debounce(wait, token))) return [];
    return next(document, position, context, token);
  };
}

export interface ToggleView { text: string; tooltip: string }

/** What the toggle item shows: the setting, and what the node said (undefined: it has not said). */
export function toggleView(enabled: boolean, info: CompletionInfo | undefined): ToggleView {
  if (!enabled) {
    return { text: '$(sparkle) Contenox: completions off', tooltip: 'Contenox inline completions are off. Click to turn them on.' };
  }
  if (info && !info.available) {
    const reason = info.reason ?? `${info.model || 'the loaded model'} has no fill-in-the-middle format`;
    return {
      text: '$(sparkle) Contenox: completions unavailable',
      tooltip: `Contenox inline completions are unavailable: ${reason}\nClick to turn them off.`,
    };
  }
  const from = info?.model ? ` from ${info.model}` : '';
  return { text: '$(sparkle) Contenox: completions on', tooltip: `Contenox inline completions${from} are on. Click to turn them off.` };
}

function contenoxConfig(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('contenox');
}

/** Flips `contenox.inlineCompletions.enable` in the user settings; returns the new value. */
export async function toggleInlineCompletions(): Promise<boolean> {
  const config = contenoxConfig();
  const enabled = !readInlineSettings(config).enabled;
  await config.update(InlineSettingKeys.enable, enabled, vscode.ConfigurationTarget.Global);
  return enabled;
}

/** The status bar item that shows whether inline completions are on and toggles them on click. */
export class CompletionToggle implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private info: CompletionInfo | undefined;
  private current: ToggleView;

  constructor() {
    this.item = vscode.window.createStatusBarItem('contenox.completions', vscode.StatusBarAlignment.Right, 99);
    this.item.name = 'Contenox inline completions';
    this.item.command = TOGGLE_COMMAND;
    this.current = this.refresh();
    this.item.show();
  }

  get view(): ToggleView {
    return this.current;
  }

  /** Re-reads the setting (after a configuration change). */
  refresh(): ToggleView {
    this.current = toggleView(readInlineSettings(contenoxConfig()).enabled, this.info);
    this.item.text = this.current.text;
    this.item.tooltip = this.current.tooltip;
    return this.current;
  }

  /** Asks the node (`contenox/completionInfo`); a failed or malformed answer leaves it unknown. */
  async query(request: () => Promise<unknown>): Promise<ToggleView> {
    try {
      this.info = toCompletionInfo(await request()) ?? undefined;
    } catch {
      this.info = undefined; // a node without the request, or one that went away
    }
    return this.refresh();
  }

  /** Forget what the node said (it stopped). */
  reset(): ToggleView {
    this.info = undefined;
    return this.refresh();
  }

  dispose(): void {
    this.item.dispose();
  }
}
