// The chat webview panel: one per window, created on demand, beside the editor.

import * as vscode from 'vscode';
import { ChatSession, type ChatBackend } from './chatSession';
import type { ToWebview } from './protocol';
import { makeNonce, renderPage } from './webview/html';

export class ChatPanel implements vscode.Disposable {
  static readonly viewType = 'contenox.chat';
  private panel: vscode.WebviewPanel | undefined;
  readonly session: ChatSession;

  constructor(private readonly extensionUri: vscode.Uri, backend: ChatBackend, onError?: (err: unknown) => void) {
    this.session = new ChatSession(backend, (msg: ToWebview) => {
      void this.panel?.webview.postMessage(msg);
    }, onError);
  }

  /** Reveal the panel (creating it if needed) and return the session that drives it. */
  show(preserveFocus = false): ChatSession {
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return this.session;
    }
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    const panel = vscode.window.createWebviewPanel(
      ChatPanel.viewType,
      'Contenox',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [media] },
    );
    const webview = panel.webview;
    webview.html = renderPage({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css')).toString(),
    });
    this.session.resetPage();
    webview.onDidReceiveMessage((msg: unknown) => void this.session.handleMessage(msg));
    panel.onDidDispose(() => {
      this.session.stop();
      this.session.resetPage();
      this.panel = undefined;
    });
    this.panel = panel;
    return this.session;
  }

  dispose(): void {
    this.session.dispose();
    this.panel?.dispose();
  }
}
