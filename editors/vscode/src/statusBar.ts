// The cache-hit status bar item: applies statusView() to a StatusBarItem; click opens explain-context.

import * as vscode from 'vscode';
import type { CacheStatus } from './protocol';
import { statusView, type StatusInput, type StatusView } from './statusView';

export const EXPLAIN_COMMAND = 'contenox.showExplainContext';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private current: StatusView;
  private readonly lastTurn = new Map<string, CacheStatus>();

  constructor() {
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
    return this.apply(input);
  }

  /**
   * State-only notifications (prefill, decode, idle after a cancel) carry no token counts: keep
   * showing the last turn's counts for that workspace.
   */
  onCacheStatus(status: CacheStatus): StatusView {
    let shown = status;
    const last = this.lastTurn.get(status.workspace);
    if (status.promptTokens > 0) {
      this.lastTurn.set(status.workspace, status);
    } else if (last) {
      shown = { ...last, state: status.state, message: status.message };
    }
    return this.apply({ kind: 'cache', status: shown });
  }

  private apply(input: StatusInput): StatusView {
    const view = statusView(input);
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
