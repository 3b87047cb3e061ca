// The cache-hit status bar item: applies statusView() to a StatusBarItem; click opens explain-context.

import * as vscode from 'vscode';
import { toAnticipation, type Anticipation, type CacheStatus } from './protocol';
import { statusView, withAnticipation, type StatusInput, type StatusView } from './statusView';

export const EXPLAIN_COMMAND = 'contenox.showExplainContext';

/** Where the last turn's status is kept across window reloads (workspaceState in the extension). */
export interface LastTurnStore {
  get(): unknown;
  set(status: CacheStatus | undefined): void;
}

/** A stored status read back: exactly the counts and workspace a turn's status has, or undefined. */
export function toLastTurn(value: unknown): CacheStatus | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  const count = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;
  const orNull = (x: unknown): x is number | null => x === null || count(x);
  if (typeof v.workspace !== 'string' || !count(v.cachedTokens) || !count(v.newTokens) || !count(v.promptTokens) ||
    v.promptTokens === 0 || !orNull(v.hitPct) || !orNull(v.ttftMs)) return undefined;
  return { workspace: v.workspace, cachedTokens: v.cachedTokens, newTokens: v.newTokens, promptTokens: v.promptTokens,
    hitPct: v.hitPct, ttftMs: v.ttftMs, state: 'idle' };
}

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private current: StatusView;
  private readonly lastTurn = new Map<string, CacheStatus>();
  /** The last turn of any workspace (what the item shows once connected, before the next turn). */
  private latest: CacheStatus | undefined;
  /** What the item shows without the anticipated context, and that context ('computing' / 'warm' only). */
  private input: StatusInput = { kind: 'starting' };
  private anticipation: Anticipation | undefined;

  constructor(private readonly store?: LastTurnStore) {
    this.latest = toLastTurn(store?.get());
    if (this.latest) this.lastTurn.set(this.latest.workspace, this.latest);
    this.item = vscode.window.createStatusBarItem('contenox.cache', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Contenox cache';
    this.item.command = EXPLAIN_COMMAND;
    this.current = this.apply({ kind: 'starting' });
    this.item.show();
  }

  get view(): StatusView {
    return this.current;
  }

  update(input: StatusInput): StatusView {
    this.anticipation = undefined;
    return this.apply(input);
  }

  /**
   * `$/contenox/anticipation`: the workspace is warm (or warming) for a file: a suffix and a tooltip line on the
   * cache status; 'idle' / 'off' clear it, as does the next turn's status.
   */
  onAnticipation(value: unknown): StatusView {
    const a = toAnticipation(value);
    if (!a) return this.current;
    this.anticipation = a.state === 'warm' || a.state === 'computing' ? a : undefined;
    return this.apply(this.input);
  }

  /**
   * State-only notifications (prefill, decode, idle after a cancel) carry no token counts: keep
   * showing the last turn's counts for that workspace.
   */
  onCacheStatus(status: CacheStatus): StatusView {
    this.anticipation = undefined; // a turn's status replaces it
    let shown = status;
    // '' is the extension's own "connected, idle" status: the last turn of any workspace.
    const last = status.workspace === '' ? this.latest : this.lastTurn.get(status.workspace);
    if (status.promptTokens > 0) {
      this.lastTurn.set(status.workspace, status);
      this.latest = status;
      this.store?.set(toLastTurn(status));
    } else if (last) {
      shown = { ...last, state: status.state, message: status.message };
    }
    return this.apply({ kind: 'cache', status: shown });
  }

  /** New chat: forget the last turns; the item says "no turn yet" (a warning, e.g. node down, stays). */
  reset(): StatusView {
    this.lastTurn.clear();
    this.latest = undefined;
    this.store?.set(undefined);
    this.anticipation = undefined; // it was for the old thread
    if (this.current.warning) return this.current; // no anticipation shows on a warning
    return this.apply({ kind: 'cache', status: {
      workspace: '', cachedTokens: 0, newTokens: 0, promptTokens: 0, hitPct: null, ttftMs: null, state: 'idle' } });
  }

  private apply(input: StatusInput): StatusView {
    this.input = input;
    const view = withAnticipation(statusView(input), input, this.anticipation);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.current = view;
    return view;
  }

  dispose(): void {
    this.item.dispose();
  }
}
