import { describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { fileToPin, pinnedPaths, PinsView } from '../../src/pinsView';
import type { WorkspacePins } from '../../src/protocol';

describe('PinsView', () => {
  it('lists each folder\'s pins as items that open the file and can be unpinned', async () => {
    let answer: WorkspacePins[] = [{ root: '/ws', pins: [{ path: 'src/a.py', uri: 'file:///ws/src/a.py' }] }];
    const view = new PinsView({ pins: async () => answer });
    let fired = 0;
    view.onDidChangeTreeData(() => { fired += 1; });
    const [item, ...rest] = await view.getChildren();
    expect(rest).toEqual([]);
    expect(item).toEqual({ root: '/ws', path: 'src/a.py', uri: 'file:///ws/src/a.py', multiRoot: false });
    const tree = view.getTreeItem(item!);
    expect(tree.label).toBe('src/a.py');
    expect(tree.contextValue).toBe('contenox.pin'); // the inline Unpin action
    expect(tree.description).toBeUndefined();
    expect(tree.command?.command).toBe('vscode.open');
    expect(String(tree.command?.arguments?.[0])).toBe('file:///ws/src/a.py');
    expect(await view.getChildren(item)).toEqual([]);
    expect(view.message).toBeUndefined();

    answer = [{ root: '/ws', pins: [] }, { root: '/other', pins: [{ path: 'b.ts', uri: 'file:///other/b.ts' }] }];
    view.refresh();
    expect(fired).toBe(1);
    const [other] = await view.getChildren();
    expect(view.getTreeItem(other!).description).toBe('/other'); // several folders: each pin names its root
    answer = [{ root: '/ws', pins: [] }];
    expect(await view.getChildren()).toEqual([]);
    expect(view.message).toMatch(/^Nothing pinned/);
  });

  it('says when the node is not there', async () => {
    const view = new PinsView({ pins: async () => { throw new Error('not started'); } });
    expect(await view.getChildren()).toEqual([]);
    expect(view.message).toBe('Not connected to the Contenox node (not started).');
  });
});

describe('fileToPin', () => {
  it('takes the file it was invoked on, a Pins item, the active editor, or asks', async () => {
    const asked: string[] = [];
    const pick = async (): Promise<vscode.Uri | undefined> => { asked.push('pick'); return vscode.Uri.file('/ws/picked.py'); };
    expect(String(await fileToPin(vscode.Uri.file('/ws/x.py'), pick))).toBe('file:///ws/x.py');
    expect(String(await fileToPin({ root: '/ws', path: 'y.py', uri: 'file:///ws/y.py', multiRoot: false }, pick)))
      .toBe('file:///ws/y.py');
    (vscode.window as { activeTextEditor: unknown }).activeTextEditor = { document: { uri: vscode.Uri.file('/ws/open.py') } };
    expect(String(await fileToPin(undefined, pick))).toBe('file:///ws/open.py');
    (vscode.window as { activeTextEditor: unknown }).activeTextEditor = undefined; // e.g. the chat panel has focus
    expect(String(await fileToPin(undefined, pick))).toBe('file:///ws/picked.py');
    expect(asked).toEqual(['pick']);
  });
});

describe('pinnedPaths', () => {
  it('spells the pinned files as the resourcePath context key does (Pin / Unpin menu items)', async () => {
    const view = new PinsView({ pins: async () => [
      { root: '/ws', pins: [{ path: 'src/a.py', uri: 'file:///ws/src/a.py' }, { path: 'b.py', uri: 'file:///ws/b.py' }] },
      { root: '/ws2', pins: [{ path: 'src/a.py', uri: 'file:///ws/src/a.py' }] },
    ] });
    expect(pinnedPaths(await view.getChildren())).toEqual(['/ws/src/a.py', '/ws/b.py']);
    expect(pinnedPaths([])).toEqual([]);
  });
});
