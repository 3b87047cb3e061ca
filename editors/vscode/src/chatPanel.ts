// The chat's pages: the editor panel (created on demand beside the editor, restored after a window reload by
// VS Code's webview serializer) and the Chat view of the Contenox activity-bar container (a webview view). Both
// show the one session: what it posts goes to every open page, and a page that opens while another shows the
// chat is given what that one shows.

import * as vscode from 'vscode';
import { ChatSession, type ChatBackend } from './chatSession';
import { besideChatColumn, trackChatColumn } from './codeActions';
import { openInWorkspace } from './openLocation';
import type { ToWebview } from './protocol';
import { makeNonce, renderPage } from './webview/html';

interface Page { webview: vscode.Webview; ready: boolean }

export class ChatPanel implements vscode.Disposable, vscode.WebviewViewProvider {
  /** The editor panel's view type (the serializer's and `onWebviewPanel:` activation's). */
  static readonly viewType = 'contenox.chat';
  /** The Chat view in the Contenox activity-bar container. */
  static readonly viewId = 'contenox.chatView';
  private panel: vscode.WebviewPanel | undefined;
  private view: vscode.WebviewView | undefined;
  private readonly pages = new Set<Page>();
  readonly session: ChatSession;

  constructor(private readonly extensionUri: vscode.Uri, backend: ChatBackend, onError?: (err: unknown) => void) {
    this.session = new ChatSession(backend, (msg: ToWebview) => {
      for (const page of this.pages) if (page.ready) void page.webview.postMessage(msg);
    }, onError, (path, line) => openInWorkspace(path, line, besideChatColumn()));
    // Links and Apply's diffs open beside the chat's editor panel, not over it.
    trackChatColumn(() => (this.panel?.visible ? this.panel.viewColumn : undefined));
  }

  /** Reveal the chat (its editor panel, or the Chat view when that is showing and there is no panel; else a new
   * panel) and return the session that drives it. */
  show(preserveFocus = false): ChatSession {
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return this.session;
    }
    if (this.view?.visible) {
      this.view.show(preserveFocus);
      return this.session;
    }
    const panel = vscode.window.createWebviewPanel(
      ChatPanel.viewType,
      'Contenox',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
      this.webviewOptions(),
    );
    this.adoptPanel(panel);
    return this.session;
  }

  /** The editor panel VS Code restored after a window reload (the serializer): it shows the saved thread. */
  restorePanel(panel: vscode.WebviewPanel): void {
    if (this.panel) { // one chat panel per window
      panel.dispose();
      return;
    }
    panel.webview.options = this.webviewOptions();
    this.adoptPanel(panel);
  }

  /** The Chat view of the activity-bar container opened. */
  resolveWebviewView(view: vscode.WebviewView): void {
    view.webview.options = this.webviewOptions();
    this.view = view;
    this.attach(view.webview, view.onDidDispose, () => {
      if (this.view === view) this.view = undefined;
    });
  }

  private adoptPanel(panel: vscode.WebviewPanel): void {
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'contenox.svg');
    this.panel = panel;
    this.attach(panel.webview, panel.onDidDispose, () => {
      if (this.panel === panel) this.panel = undefined;
    });
  }

  private webviewOptions(): vscode.WebviewOptions & vscode.WebviewPanelOptions {
    return { enableScripts: true, retainContextWhenHidden: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')] };
  }

  /** Put the chat page into `webview` and route its messages to the session until it is disposed. */
  private attach(webview: vscode.Webview, onDispose: vscode.Event<void>, forget: () => void): void {
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    const page: Page = { webview, ready: false };
    this.pages.add(page);
    webview.html = renderPage({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css')).toString(),
    });
    if (this.pages.size === 1) this.session.resetPage();
    webview.onDidReceiveMessage((msg: unknown) => this.receive(page, msg));
    onDispose(() => {
      this.pages.delete(page);
      forget();
      if (this.pages.size === 0) { // the last page closed: nothing shows the chat
        this.session.stop();
        this.session.resetPage();
      }
    });
  }

  /** A page's message: a page that (re)loads while the session already shows the chat is given what it shows. */
  private receive(page: Page, msg: unknown): void {
    const ready = !!msg && typeof msg === 'object' && (msg as { type?: unknown }).type === 'ready';
    if (ready && this.session.isReady) {
      page.ready = true;
      for (const shown of this.session.transcript) void page.webview.postMessage(shown);
      return;
    }
    if (ready) page.ready = true;
    void this.session.handleMessage(msg);
  }

  dispose(): void {
    this.session.dispose();
    this.panel?.dispose();
  }
}
