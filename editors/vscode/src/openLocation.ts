// Opens a workspace file at a line for the chat panel's links (explain chunks, cited files,
// `path:line` in answers). Only workspace-relative paths without `..` are opened.

import * as vscode from 'vscode';
import { isLineNumber, isSafeRelativePath } from './protocol';

/** Globs for the suffix search of a path the answer cut short (`signer.py` for `pkg/signer.py`). */
const PLAIN_PATH = /^[\w./-]+$/;
const EXCLUDE = '**/{node_modules,.git,.venv}/**';

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    const stat = await vscode.workspace.fs.stat(uri);
    return (stat.type & vscode.FileType.File) !== 0;
  } catch {
    return false;
  }
}

/** The file `path` names: under the first workspace folder that has it, else the one file ending with it. */
export async function resolveInWorkspace(path: string): Promise<vscode.Uri | undefined> {
  if (!isSafeRelativePath(path)) return undefined;
  const folders = vscode.workspace.workspaceFolders ?? [];
  for (const folder of folders) {
    const uri = vscode.Uri.joinPath(folder.uri, path);
    if (await exists(uri)) return uri;
  }
  if (folders.length === 0 || !PLAIN_PATH.test(path)) return undefined;
  const found = await vscode.workspace.findFiles(`**/${path.replace(/^(\.\/)+/, '')}`, EXCLUDE, 2);
  return found.length === 1 ? found[0] : undefined;
}

/**
 * The editor group a link of the chat opens in, so that it does not cover the chat: with the chat in an editor
 * group (`chat`), the group of the editor the user was last in, else another group showing an editor, else a new
 * group beside the chat; with the chat in the sidebar (or hidden), undefined: the active group.
 */
export function linkColumn(chat: vscode.ViewColumn | undefined, lastEditor: vscode.ViewColumn | undefined,
  editors: readonly (vscode.ViewColumn | undefined)[]): vscode.ViewColumn | undefined {
  if (chat === undefined) return undefined;
  if (lastEditor !== undefined && lastEditor !== chat) return lastEditor;
  return editors.find((column) => column !== undefined && column !== chat) ?? vscode.ViewColumn.Beside;
}

/** Open `path` (workspace-relative) with the cursor at the start of 1-based `line`, in editor group `column`
 * (default: the active one). */
export async function openInWorkspace(path: string, line?: number, column?: vscode.ViewColumn): Promise<boolean> {
  const uri = await resolveInWorkspace(path);
  if (!uri) {
    if (isSafeRelativePath(path)) {
      void vscode.window.showWarningMessage(`Contenox: ${path} is not in the workspace.`);
    }
    return false;
  }
  const options: vscode.TextDocumentShowOptions = { preview: true };
  if (column !== undefined) options.viewColumn = column;
  if (line !== undefined && isLineNumber(line)) {
    const position = new vscode.Position(line - 1, 0);
    options.selection = new vscode.Range(position, position);
  }
  await vscode.window.showTextDocument(uri, options);
  return true;
}
