import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { ChatSession, type ChatBackend } from '../../src/chatSession';
import { linkColumn, openInWorkspace } from '../../src/openLocation';
import type { ToWebview } from '../../src/protocol';
import { created, files, workspace } from '../mocks/vscode';
import { EXPLAIN } from './fixtures';

const ROOT = vscode.Uri.file('/abs/root');

beforeEach(() => {
  created.shown.length = 0;
  created.messages.length = 0;
  files.clear();
  files.add('file:///abs/root/pkg/signer.py');
  files.add('file:///abs/root/README.md');
  workspace.workspaceFolders = [{ uri: ROOT, name: 'root', index: 0 }];
});

const backend: ChatBackend = {
  chat: async () => ({ text: '', explain: null }),
  executeCommand: async () => null,
  explainContext: async () => EXPLAIN,
};

function session(): { session: ChatSession; posted: ToWebview[] } {
  const posted: ToWebview[] = [];
  const s = new ChatSession(backend, (m) => posted.push(m));
  return { session: s, posted };
}

describe('openInWorkspace', () => {
  it('opens workspaceFolder/path with the cursor at the 1-based line', async () => {
    expect(await openInWorkspace('pkg/signer.py', 40)).toBe(true);
    expect(created.shown).toHaveLength(1);
    const shown = created.shown[0]!;
    expect(shown.uri).toBe('file:///abs/root/pkg/signer.py');
    expect(shown.options?.selection?.start).toEqual({ line: 39, character: 0 });
    expect(shown.options?.selection?.end).toEqual({ line: 39, character: 0 });
  });

  it('opens at the top without a line', async () => {
    expect(await openInWorkspace('README.md')).toBe(true);
    expect(created.shown[0]?.options?.selection).toBeUndefined();
  });

  it('finds a path the answer cut short when exactly one file ends with it', async () => {
    expect(await openInWorkspace('signer.py', 3)).toBe(true);
    expect(created.shown[0]?.uri).toBe('file:///abs/root/pkg/signer.py');
  });

  it('tries every workspace folder', async () => {
    files.add('file:///abs/other/lib/x.ts');
    workspace.workspaceFolders = [
      { uri: ROOT, name: 'root', index: 0 },
      { uri: vscode.Uri.file('/abs/other'), name: 'other', index: 1 },
    ];
    expect(await openInWorkspace('lib/x.ts', 2)).toBe(true);
    expect(created.shown[0]?.uri).toBe('file:///abs/other/lib/x.ts');
  });

  it('says so when the file is not in the workspace', async () => {
    expect(await openInWorkspace('pkg/crypto.py', 1)).toBe(false);
    expect(created.shown).toEqual([]);
    expect(created.messages).toEqual([{ level: 'warning', text: 'Contenox: pkg/crypto.py is not in the workspace.' }]);
  });

  it('refuses absolute, parent-relative and scheme paths without touching the file system', async () => {
    files.add('file:///etc/passwd');
    files.add('file:///abs/passwd');
    for (const bad of ['/etc/passwd', '../passwd', 'pkg/../../passwd', 'file:///etc/passwd', 'C:/x.py', 'a\\b.py', '']) {
      expect(await openInWorkspace(bad, 1)).toBe(false);
    }
    expect(created.shown).toEqual([]);
    expect(created.messages).toEqual([]);
  });
});

describe('ChatSession handles the page\'s open message', () => {
  it('opens the file at the line', async () => {
    const { session: s, posted } = session();
    await s.handleMessage({ type: 'ready' });
    await s.handleMessage({ type: 'open', path: 'pkg/signer.py', line: 40 });
    expect(created.shown.map((x) => [x.uri, x.options?.selection?.start.line])).toEqual([['file:///abs/root/pkg/signer.py', 39]]);
    expect(posted).toEqual([]);
  });

  it('ignores unsafe or malformed open messages', async () => {
    const opened: unknown[] = [];
    const s = new ChatSession(backend, () => undefined, () => undefined, async (p, l) => opened.push([p, l]));
    await s.handleMessage({ type: 'ready' });
    for (const msg of [
      { type: 'open', path: '../outside.py', line: 1 },
      { type: 'open', path: '/abs/root/pkg/signer.py' },
      { type: 'open', path: 'vscode://settings' },
      { type: 'open', path: 'pkg/signer.py', line: 0 },
      { type: 'open', path: 'pkg/signer.py', line: 1.5 },
      { type: 'open', path: 'pkg/signer.py', line: '3' },
      { type: 'open', path: 42 },
      { type: 'open' },
    ]) await s.handleMessage(msg);
    expect(opened).toEqual([]);
    await s.handleMessage({ type: 'open', path: 'pkg/signer.py' });
    expect(opened).toEqual([['pkg/signer.py', undefined]]);
  });

  it('reports a failure to open on the page', async () => {
    const posted: ToWebview[] = [];
    const s = new ChatSession(backend, (m) => posted.push(m), () => undefined, async () => {
      throw new Error('permission denied');
    });
    await s.handleMessage({ type: 'ready' });
    await s.handleMessage({ type: 'open', path: 'pkg/signer.py', line: 2 });
    expect(posted).toEqual([{ type: 'error', message: 'Could not open pkg/signer.py: permission denied' }]);
  });
});

describe('links open beside the chat, not over it', () => {
  const { One, Two, Three, Beside } = vscode.ViewColumn;
  it('picks the group of the last editor, else another group with an editor, else a new one beside', () => {
    expect(linkColumn(Two, One, [One, Two])).toBe(One);
    expect(linkColumn(Two, Two, [Two, Three])).toBe(Three); // the last editor shares the chat's group
    expect(linkColumn(Two, undefined, [undefined, Two, One])).toBe(One);
    expect(linkColumn(One, undefined, [One])).toBe(Beside);
    expect(linkColumn(undefined, One, [One])).toBeUndefined(); // chat in the sidebar: the active group
  });

  it('opens the file in the group it is given', async () => {
    expect(await openInWorkspace('pkg/signer.py', 3, vscode.ViewColumn.One)).toBe(true);
    expect(created.shown[0]!.options).toMatchObject({ viewColumn: vscode.ViewColumn.One, preview: true });
  });

  it('the chat panel opens a link in the editor group that is not the chat', async () => {
    const { ChatPanel } = await import('../../src/chatPanel');
    const mock = vscode as unknown as typeof import('../mocks/vscode');
    mock.created.panels.length = 0;
    const chat = new ChatPanel(mock.Uri.file('/ext') as unknown as vscode.Uri, backend);
    mock.window.visibleTextEditors = [{ viewColumn: vscode.ViewColumn.One }];
    chat.show(); // beside: group two in the mock
    const panel = mock.created.panels[0]!;
    panel.webview.send({ type: 'ready' });
    await new Promise((r) => setTimeout(r, 0));
    panel.webview.send({ type: 'open', path: 'pkg/signer.py', line: 2 });
    await expect.poll(() => created.shown.length).toBe(1);
    expect(created.shown[0]!.options).toMatchObject({ viewColumn: vscode.ViewColumn.One });
    mock.window.visibleTextEditors = [];
    chat.dispose();
  });
});
