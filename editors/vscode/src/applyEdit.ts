// Applies a proposed edit through a WorkspaceEdit, so it shows in the editor and can be undone.

import * as vscode from 'vscode';
import type { ProposedEdit } from './protocol';

/** Apply `edit`; the reason it was not applied, or null. A file changed since the proposal is refused. */
export async function applyProposedEdit(edit: ProposedEdit): Promise<string | null> {
  const uri = vscode.Uri.parse(edit.uri);
  const change = new vscode.WorkspaceEdit();
  if (edit.oldText === null) {
    change.createFile(uri, { ignoreIfExists: false, contents: new TextEncoder().encode(edit.newText) });
  } else {
    const doc = await vscode.workspace.openTextDocument(uri);
    const text = doc.getText();
    if (text !== edit.oldText) return `${edit.path} changed since the edit was proposed; ask again`;
    change.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(text.length)), edit.newText);
  }
  return (await vscode.workspace.applyEdit(change)) ? null : `VS Code did not apply the edit to ${edit.path}`;
}
