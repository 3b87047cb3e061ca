// The cache-hit status bar item: applies statusView() to a StatusBarItem; click opens explain-context.

import * as vscode from 'vscode';
import type { CacheStatus } from './protocol';
import { statusView, type StatusInput, type StatusView } from './statusView';

export const EXPLAIN_COMMAND = 'contenox.showExplainContext';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private current: StatusView;

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

  onCacheStatus(status: CacheStatus): StatusView {
    return this.apply({ kind: 'cache', status });
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
