// What a code block's Copy, Insert and Apply do in VS Code: the clipboard, the cursor(s) of the editor the
// user was last in (the chat panel has the focus when its button is clicked), and a replacement of that
// editor's selection (or whole file) shown as a diff before anything changes.

import * as vscode from 'vscode';
import { linkColumn } from './openLocation';

let lastEditor: vscode.TextEditor | undefined;
let chatColumn: () => vscode.ViewColumn | undefined = () => undefined;

/** Remember the last text editor that had the focus (called once at activation). */
export function trackLastEditor(): vscode.Disposable {
  lastEditor = vscode.window.activeTextEditor;
  return vscode.window.onDidChangeActiveTextEditor((editor) => {
    if (editor) lastEditor = editor;
  });
}

/** The editor group of the last text editor that had the focus, while it is visible. */
export function lastEditorColumn(): vscode.ViewColumn | undefined {
  return lastEditor && vscode.window.visibleTextEditors.includes(lastEditor) ? lastEditor.viewColumn : undefined;
}

/** Tell where the chat's editor panel is (its group while visible; undefined in the sidebar or hidden): the chat
 * panel does, once, so that what the chat opens goes beside it. */
export function trackChatColumn(column: () => vscode.ViewColumn | undefined): void {
  chatColumn = column;
}

/** The editor group the chat opens a file, a citation or an Apply's diff in: not the chat's (see linkColumn). */
export function besideChatColumn(): vscode.ViewColumn | undefined {
  return linkColumn(chatColumn(), lastEditorColumn(), vscode.window.visibleTextEditors.map((e) => e.viewColumn));
}

/** `vscode.diff`'s options: a preview editor beside the chat. */
export function diffOptions(): vscode.TextDocumentShowOptions {
  const column = besideChatColumn();
  return column === undefined ? { preview: true } : { preview: true, viewColumn: column };
}

export async function copyToClipboard(text: string): Promise<void> {
  await vscode.env.clipboard.writeText(text);
  vscode.window.setStatusBarMessage('Contenox: code copied', 2000);
}

function targetEditor(): vscode.TextEditor | undefined {
  const visible = vscode.window.visibleTextEditors;
  return vscode.window.activeTextEditor ??
    (lastEditor && visible.includes(lastEditor) ? lastEditor : undefined) ?? visible[0];
}

/** Insert at every cursor (replacing selections) of the active or last active editor; why not, or null. */
export async function insertAtCursor(text: string): Promise<string | null> {
  const editor = targetEditor();
  if (!editor) return 'open a file to insert the code into';
  const done = await editor.edit((edit) => {
    for (const selection of editor.selections) edit.replace(selection, text);
  });
  return done ? null : `${vscode.workspace.asRelativePath(editor.document.uri)} did not take the edit`;
}

/** What applying a code block would do: the file's text after it, and what it replaces. */
export interface CodeApplyPlan {
  after: string;
  /** `the selection (lines 3-7)` or `the whole file`. */
  scope: string;
}

/**
 * The block replaces the selection (`start`..`end` offsets, 0-based `lines`) or, with no selection, the whole
 * file: what the file would read.
 */
export function planCodeApply(before: string, code: string, selection: { start: number; end: number;
  lines: [number, number] } | null): CodeApplyPlan {
  if (selection === null || selection.start === selection.end) return { after: code, scope: 'the whole file' };
  const [first, last] = selection.lines;
  const scope = first === last ? `the selection (line ${first + 1})` : `the selection (lines ${first + 1}-${last + 1})`;
  return { after: before.slice(0, selection.start) + code + before.slice(selection.end), scope };
}

export const PREVIEW_SCHEME = 'contenox-preview';
const previews = new Map<string, string>();
let previewCount = 0;

/** Serves the right side of an Apply diff preview (read-only, gone once decided). */
export function registerApplyPreview(): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, {
    provideTextDocumentContent: (uri) => previews.get(uri.query) ?? '',
  });
}

/** Serve `text` read-only as the preview document `name` (the right side of a diff) until disposed. */
export function previewDocument(name: string, text: string): { uri: vscode.Uri; dispose(): void } {
  const key = String(++previewCount);
  previews.set(key, text);
  return { uri: vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: `/${name}`, query: key }), dispose: () => previews.delete(key) };
}

/** The active or last active editor has a non-empty selection (what a block that resolves nowhere replaces). */
export function lastEditorSelection(): { uri: vscode.Uri; empty: boolean } | undefined {
  const editor = targetEditor();
  return editor ? { uri: editor.document.uri, empty: editor.selection.isEmpty } : undefined;
}

/**
 * Apply a code block to the last active editor: its selection, or the whole file when nothing is selected.
 * The change is shown as a diff first and made only when the user confirms, through a WorkspaceEdit (undoable);
 * a file edited during the preview is refused. Why it was not applied, or null (also when the user declined).
 */
export async function applyWithPreview(code: string): Promise<string | null> {
  const editor = targetEditor();
  if (!editor) return 'open a file (and select the lines to replace) to apply the code to';
  const doc = editor.document;
  const version = doc.version;
  const before = doc.getText();
  const sel = editor.selection;
  const plan = planCodeApply(before, code, sel.isEmpty ? null : {
    start: doc.offsetAt(sel.start), end: doc.offsetAt(sel.end), lines: [sel.start.line, sel.end.line] });
  const range = sel.isEmpty ? new vscode.Range(doc.positionAt(0), doc.positionAt(before.length))
    : new vscode.Range(sel.start, sel.end);
  const name = vscode.workspace.asRelativePath(doc.uri);
  const key = String(++previewCount);
  previews.set(key, plan.after);
  try {
    const right = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: `/${name}`, query: key });
    await vscode.commands.executeCommand('vscode.diff', doc.uri, right, `${name}: apply the code block to ${plan.scope}`,
      diffOptions());
    const choice = await vscode.window.showInformationMessage(
      `Replace ${plan.scope} of ${name} with the code block? (Undo reverts it.)`, { modal: true }, 'Apply');
    if (choice !== 'Apply') {
      vscode.window.setStatusBarMessage('Contenox: code block not applied', 3000);
      return null;
    }
    if (doc.version !== version) return `${name} changed during the preview; apply again`;
    const change = new vscode.WorkspaceEdit();
    change.replace(doc.uri, range, code);
    return (await vscode.workspace.applyEdit(change)) ? null : `VS Code did not apply the code to ${name}`;
  } finally {
    previews.delete(key);
  }
}
