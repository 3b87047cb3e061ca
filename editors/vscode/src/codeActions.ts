// What a code block's Copy and Insert do in VS Code: the clipboard, and the cursor(s) of the editor the
// user was last in (the chat panel has the focus when its button is clicked).

import * as vscode from 'vscode';

let lastEditor: vscode.TextEditor | undefined;

/** Remember the last text editor that had the focus (called once at activation). */
export function trackLastEditor(): vscode.Disposable {
  lastEditor = vscode.window.activeTextEditor;
  return vscode.window.onDidChangeActiveTextEditor((editor) => {
    if (editor) lastEditor = editor;
  });
}

export async function copyToClipboard(text: string): Promise<void> {
  await vscode.env.clipboard.writeText(text);
  vscode.window.setStatusBarMessage('Contenox: code copied', 2000);
}

/** Insert at every cursor (replacing selections) of the active or last active editor; why not, or null. */
export async function insertAtCursor(text: string): Promise<string | null> {
  const visible = vscode.window.visibleTextEditors;
  const editor = vscode.window.activeTextEditor ??
    (lastEditor && visible.includes(lastEditor) ? lastEditor : undefined) ?? visible[0];
  if (!editor) return 'open a file to insert the code into';
  const done = await editor.edit((edit) => {
    for (const selection of editor.selections) edit.replace(selection, text);
  });
  return done ? null : `${vscode.workspace.asRelativePath(editor.document.uri)} did not take the edit`;
}
