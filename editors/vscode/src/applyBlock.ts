// A chat code block's Apply through the node's edit machinery (`contenox/resolveBlock`): the file the block or its
// heading names, the definitions it replaces, edit blocks against the files' current text, renames carried to every
// use. The per-file diffs are shown, then applied together once confirmed (one undo step per file). A block that
// names no file and whose definitions are in several files asks which; the whole file is replaced only when the
// block is one; a block that resolves nowhere replaces the editor's selection (the old Apply), when there is one.

import * as vscode from 'vscode';
import { applyProposedEdits } from './applyEdit';
import { applyWithPreview, besideChatColumn, diffOptions, lastEditorSelection, previewDocument } from './codeActions';
import type { ProposedEdit, ResolveBlockParams, ResolvedBlock } from './protocol';

/** A code block as the page sends it: its text, the line before it, the question of its answer, its language. */
export interface CodeBlock { text: string; heading?: string; question?: string; lang?: string }

/** What applying needs from VS Code (a fake in unit tests). */
export interface ApplyUi {
  /** A workspace file or folder the request is scoped to. */
  scope(): string | undefined;
  /** Ask which of `candidates` the block changes; undefined: dismissed. */
  pickFile(candidates: readonly string[]): Promise<string | undefined>;
  /** Show the diffs and ask; true: apply. */
  confirm(edits: readonly ProposedEdit[], question: string): Promise<boolean>;
  apply(edits: readonly ProposedEdit[]): Promise<string | null>;
  /** The last editor has a non-empty selection. */
  hasSelection(): boolean;
  /** The old Apply: the block replaces the selection, after a diff preview. */
  replaceSelection(text: string): Promise<string | null>;
  /** Say something that is not a failure (declined, nothing to change). */
  status(text: string): void;
}

/** The question before applying: what changes where. */
export function confirmQuestion(resolved: ResolvedBlock): string {
  const files = resolved.edits.map((e) => e.path);
  if (resolved.wholeFile && resolved.edits.length >= 1) {
    const first = resolved.edits[0] as ProposedEdit;
    const rest = files.length > 1 ? ` and update ${files.slice(1).join(', ')}` : '';
    return first.oldText === null ? `Create ${first.path} from the code block${rest}?`
      : `Replace the whole of ${first.path} with the code block${rest}? (Undo reverts it.)`;
  }
  if (files.length === 1) return `Apply the code block to ${files[0]}? (Undo reverts it.)`;
  return `Apply the code block to ${files.length} files (${files.join(', ')})? (Undo reverts each file.)`;
}

/**
 * Resolve `block` through the node and apply what it makes of it after the user saw the diffs and confirmed. The
 * reason it was not applied, or null (also when the user declined).
 */
export async function applyCodeBlock(block: CodeBlock, resolve: (params: ResolveBlockParams) => Promise<ResolvedBlock>,
  ui: ApplyUi = editorUi): Promise<string | null> {
  const params: ResolveBlockParams = { text: block.text };
  const scope = ui.scope();
  if (scope) params.uri = scope;
  if (block.heading) params.heading = block.heading;
  if (block.question) params.question = block.question;
  if (block.lang) params.lang = block.lang;
  let resolved = await resolve(params);
  if (resolved.edits.length === 0 && resolved.named === null && resolved.candidates.length > 1) {
    const path = await ui.pickFile(resolved.candidates);
    if (path === undefined) {
      ui.status('Contenox: code block not applied');
      return null;
    }
    resolved = await resolve({ ...params, path });
  }
  if (resolved.edits.length === 0) {
    if (resolved.named === null && ui.hasSelection()) return ui.replaceSelection(block.text);
    if (resolved.problems.length > 0) return resolved.problems.join('; ');
    if (resolved.candidates.length === 1) return `the code block changes nothing in ${resolved.candidates[0]}`;
    return resolved.named !== null ? `the code block changes nothing in ${resolved.named}`
      : 'the code block names no file and none of its definitions is in the workspace: select the lines it ' +
        'replaces and apply again, or use Insert';
  }
  if (!(await ui.confirm(resolved.edits, confirmQuestion(resolved)))) {
    ui.status('Contenox: code block not applied');
    return null;
  }
  const problem = await ui.apply(resolved.edits);
  if (problem === null && resolved.notes.length > 0) ui.status(`Contenox: ${resolved.notes.join('; ')}`);
  return problem;
}

/** The diffs in VS Code's diff editor (several files: one multi-file diff), then a modal question. */
async function confirmInEditor(edits: readonly ProposedEdit[], question: string): Promise<boolean> {
  const previews = edits.map((e) => ({ edit: e, before: previewDocument(e.path, e.oldText ?? ''),
    after: previewDocument(e.path, e.newText ?? '') }));
  try {
    const title = `Contenox: apply the code block (${edits.map((e) => e.path).join(', ')})`;
    if (previews.length === 1) {
      const only = previews[0] as (typeof previews)[number];
      const left = only.edit.oldText === null ? only.before.uri : vscode.Uri.parse(only.edit.uri);
      await vscode.commands.executeCommand('vscode.diff', left, only.after.uri, title, diffOptions());
    } else {
      // `vscode.changes` opens in the active group (the chat's, when Apply was clicked there): make the group
      // beside the chat active first, showing the first file the block changes.
      const column = besideChatColumn();
      const first = previews[0]?.edit;
      if (column !== undefined && first && first.oldText !== null) {
        await vscode.window.showTextDocument(vscode.Uri.parse(first.uri), { viewColumn: column, preview: true });
      }
      await vscode.commands.executeCommand('vscode.changes', title, previews.map((p) => [
        vscode.Uri.parse(p.edit.uri), p.edit.oldText === null ? p.before.uri : vscode.Uri.parse(p.edit.uri),
        p.after.uri]));
    }
    return (await vscode.window.showInformationMessage(question, { modal: true }, 'Apply')) === 'Apply';
  } finally {
    for (const p of previews) {
      p.before.dispose();
      p.after.dispose();
    }
  }
}

export const editorUi: ApplyUi = {
  scope: () => {
    const last = lastEditorSelection();
    return last?.uri.scheme === 'file' ? last.uri.toString() : vscode.workspace.workspaceFolders?.[0]?.uri.toString();
  },
  pickFile: async (candidates) => (await vscode.window.showQuickPick([...candidates], {
    placeHolder: 'The code block names no file and its definitions are in several: which file does it change?',
  })) ?? undefined,
  confirm: confirmInEditor,
  apply: applyProposedEdits,
  hasSelection: () => lastEditorSelection()?.empty === false,
  replaceSelection: applyWithPreview,
  status: (text) => void vscode.window.setStatusBarMessage(text, 5000),
};
