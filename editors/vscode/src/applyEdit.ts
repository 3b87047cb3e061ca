// Applies a proposed edit through a WorkspaceEdit, so it shows in the editor and can be undone.

import * as vscode from 'vscode';
import type { ProposedEdit } from './protocol';

/** Apply `edit`; the reason it was not applied, or null. A file changed since the proposal is refused. */
export async function applyProposedEdit(edit: ProposedEdit): Promise<string | null> {
  const uri = vscode.Uri.parse(edit.uri);
  const change = new vscode.WorkspaceEdit();
  if (edit.oldText === null) {
    change.createFile(uri, { ignoreIfExists: false, contents: new TextEncoder().encode(edit.newText ?? '') });
  } else {
    const doc = await vscode.workspace.openTextDocument(uri);
    const text = doc.getText();
    if (text !== edit.oldText) return `${edit.path} changed since the edit was proposed; ask again`;
    if (edit.newText === null) change.deleteFile(uri);
    else change.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(text.length)), edit.newText);
  }
  return (await vscode.workspace.applyEdit(change)) ? null : `VS Code did not apply the edit to ${edit.path}`;
}

/**
 * Apply several files' edits together (a rename and its uses) in one WorkspaceEdit: each file is one undo step.
 * Nothing is applied when any file changed since the edits were made; the reason, or null.
 */
export async function applyProposedEdits(edits: readonly ProposedEdit[]): Promise<string | null> {
  const change = new vscode.WorkspaceEdit();
  for (const edit of edits) {
    const uri = vscode.Uri.parse(edit.uri);
    if (edit.oldText === null) {
      change.createFile(uri, { ignoreIfExists: false, contents: new TextEncoder().encode(edit.newText ?? '') });
      continue;
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    const text = doc.getText();
    if (text !== edit.oldText) return `${edit.path} changed since the code block was resolved; apply again`;
    // a rename that moves its file: the old file deleted, the new one created by its own edit
    if (edit.newText === null) change.deleteFile(uri);
    else change.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(text.length)), edit.newText);
  }
  const names = edits.map((e) => e.path).join(', ');
  return (await vscode.workspace.applyEdit(change)) ? null : `VS Code did not apply the edit to ${names}`;
}
