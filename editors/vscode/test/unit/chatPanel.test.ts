import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { ChatPanel } from '../../src/chatPanel';
import type { ChatBackend } from '../../src/chatSession';
import type { ChatParams, ChatResult } from '../../src/protocol';
import { EXPLAIN } from './fixtures';

const mock = vscode as unknown as typeof import('../mocks/vscode');
type Panel = InstanceType<typeof mock.MockWebviewPanel>;

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

function host() {
  const pending: { params: ChatParams; resolve(r: ChatResult): void }[] = [];
  const backend: ChatBackend = {
    chat: (params) => new Promise((resolve) => { pending.push({ params, resolve }); }),
    executeCommand: async () => null,
    explainContext: async () => EXPLAIN,
    history: async (thread) => (thread === 'panel-saved' ? [{ turn: 3, user: 'What is add?', answer: 'It adds.' }] : []),
  };
  const chat = new ChatPanel(mock.Uri.file('/ext') as unknown as vscode.Uri, backend);
  return { chat, pending };
}

const restored = [
  { type: 'start', chatId: 'restored-panel-saved-3', prompt: 'What is add?' },
  { type: 'done', chatId: 'restored-panel-saved-3', text: 'It adds.', explain: EXPLAIN, truncated: true },
];

describe('ChatPanel', () => {
  beforeEach(() => {
    mock.created.panels.length = 0;
  });

  it('a panel the serializer restores after a reload shows the saved thread with its notes', async () => {
    const { chat } = host();
    chat.session.thread = 'panel-saved';
    chat.session.turnNotes.set('panel-saved', 3, { explain: EXPLAIN, truncated: true });
    const panel = new mock.MockWebviewPanel(ChatPanel.viewType, mock.ViewColumn.Two);
    chat.restorePanel(panel as unknown as vscode.WebviewPanel);
    expect(panel.webview.html).toContain('id="empty"');
    expect(panel.webview.options).toMatchObject({ enableScripts: true });
    panel.webview.send({ type: 'ready' });
    await tick();
    expect(panel.webview.posted).toEqual(restored);
    // Open Chat reveals it rather than making a second one; a second restored panel is closed.
    chat.show();
    expect(panel.revealed).toBe(1);
    expect(mock.created.panels).toEqual([]);
    const extra = new mock.MockWebviewPanel(ChatPanel.viewType, mock.ViewColumn.One);
    chat.restorePanel(extra as unknown as vscode.WebviewPanel);
    expect(extra.disposed).toBe(true);
  });

  it('the activity-bar view shows the same chat: a page that opens later is given what the other shows', async () => {
    const { chat, pending } = host();
    chat.session.thread = 'panel-saved';
    chat.show();
    const panel = mock.created.panels[0] as Panel;
    panel.webview.send({ type: 'ready' });
    await tick();
    const view = new mock.MockWebviewView();
    chat.resolveWebviewView(view as unknown as vscode.WebviewView);
    view.webview.send({ type: 'ready' });
    expect(view.webview.posted).toEqual([
      { type: 'start', chatId: 'restored-panel-saved-3', prompt: 'What is add?' },
      { type: 'done', chatId: 'restored-panel-saved-3', text: 'It adds.', explain: null },
    ]);
    expect(view.webview.posted).toEqual(panel.webview.posted);
    // A question from either page streams to both.
    view.webview.send({ type: 'send', prompt: 'and sub?' });
    await tick();
    const { chatId } = pending[0]!.params;
    chat.session.onChunk({ chatId, text: 'It subtracts.' });
    for (const page of [panel, view]) {
      expect(page.webview.posted.slice(-2)).toEqual([
        { type: 'start', chatId, prompt: 'and sub?' }, { type: 'chunk', chatId, text: 'It subtracts.' }]);
    }
    // Closing one page leaves the other running; closing the last stops the turn.
    panel.dispose();
    expect(chat.session.activeChats).toEqual([chatId]);
    chat.show(); // the view is showing: revealed, no new panel
    expect(view.shown).toBe(1);
    expect(mock.created.panels).toHaveLength(1);
    view.dispose();
    expect(chat.session.activeChats).toEqual([chatId]); // cancelled: ends when the node answers
    expect(chat.session.isReady).toBe(false);
    pending[0]!.resolve({ text: 'late', explain: null });
  });

  it('a page reloaded in place is given the chat again', async () => {
    const { chat } = host();
    chat.session.thread = 'panel-saved';
    chat.show();
    const panel = mock.created.panels[0] as Panel;
    panel.webview.send({ type: 'ready' });
    await tick();
    const before = panel.webview.posted.length;
    panel.webview.send({ type: 'ready' });
    expect(panel.webview.posted.slice(before)).toEqual(panel.webview.posted.slice(0, before));
  });
});
