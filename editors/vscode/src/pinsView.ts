// The Pins view (Explorer): the files the node puts in every prompt of each workspace folder, from
// `contenox/pins`; unpin from an item, pin the active editor or a picked file from the title bar.

import * as vscode from 'vscode';
import type { WorkspacePins } from './protocol';

/** What the view needs from the language client (a fake in unit tests). */
export interface PinsBackend {
  pins(): Promise<WorkspacePins[]>;
}

/** A pinned file: its workspace folder's root and its path there. */
export interface PinItem { root: string; path: string; uri: string; multiRoot: boolean }

export class PinsView implements vscode.TreeDataProvider<PinItem> {
  private readonly changed = new vscode.EventEmitter<PinItem | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /** Why the list is empty, for the view's message (not connected, nothing pinned). */
  message: string | undefined;

  constructor(private readonly backend: PinsBackend) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  async getChildren(element?: PinItem): Promise<PinItem[]> {
    if (element) return [];
    let found: WorkspacePins[];
    try {
      found = await this.backend.pins();
    } catch (err) {
      this.message = `Not connected to the Contenox node (${err instanceof Error ? err.message : String(err)}).`;
      return [];
    }
    const items = found.flatMap((ws) => ws.pins.map((p) => ({
      root: ws.root, path: p.path, uri: p.uri, multiRoot: found.length > 1,
    })));
    this.message = items.length ? undefined : 'Nothing pinned: pinned files go into every prompt of the workspace.';
    return items;
  }

  getTreeItem(item: PinItem): vscode.TreeItem {
    const tree = new vscode.TreeItem(item.path, vscode.TreeItemCollapsibleState.None);
    const uri = vscode.Uri.parse(item.uri);
    tree.resourceUri = uri;
    tree.description = item.multiRoot ? item.root : undefined;
    tree.tooltip = `${item.path} is in every prompt of ${item.root}`;
    tree.contextValue = 'contenox.pin';
    tree.command = { command: 'vscode.open', title: 'Open', arguments: [uri] };
    return tree;
  }
}

/** The file a pin command acts on: the one it was invoked on, else the active editor's, else one the user picks. */
export async function fileToPin(resource: unknown, pick: () => Promise<vscode.Uri | undefined>): Promise<vscode.Uri | undefined> {
  if (resource instanceof vscode.Uri) return resource;
  if (resource && typeof resource === 'object' && typeof (resource as PinItem).uri === 'string') {
    return vscode.Uri.parse((resource as PinItem).uri); // an item of the Pins view
  }
  const active = (vscode.window.activeTextEditor as vscode.TextEditor | undefined)?.document.uri;
  return active ?? pick();
}

/** The context key the menus read: the file system paths of the pinned files (`resourcePath in …`). */
export const PINNED_CONTEXT = 'contenox.pinnedPaths';

/** The pinned files' paths as VS Code's `resourcePath` context key spells them (Pin / Unpin menu items). */
export function pinnedPaths(items: readonly PinItem[]): string[] {
  return [...new Set(items.map((item) => vscode.Uri.parse(item.uri).fsPath))];
}
