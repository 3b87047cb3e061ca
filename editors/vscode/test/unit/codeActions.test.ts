import { beforeEach, describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import {
  applyWithPreview, diffOptions, planCodeApply, PREVIEW_SCHEME, registerApplyPreview, trackChatColumn,
} from '../../src/codeActions';
import { answers, created, Position, Range, Uri, ViewColumn, WorkspaceEdit, window } from '../mocks/vscode';

/** A text editor over `text` (offsets <-> positions by lines), with a selection between two offsets. */
function fakeEditor(text: string, from: number, to: number): { doc: { version: number; text: string } } {
  const doc = { version: 1, text };
  const positionAt = (offset: number): Position => {
    const before = doc.text.slice(0, offset).split('\n');
    return new Position(before.length - 1, (before[before.length - 1] ?? '').length);
  };
  const offsetAt = (p: Position): number =>
    doc.text.split('\n').slice(0, p.line).reduce((n, line) => n + line.length + 1, 0) + p.character;
  const start = positionAt(from);
  const end = positionAt(to);
  window.activeTextEditor = {
    document: { get version() { return doc.version; }, getText: () => doc.text, positionAt, offsetAt,
      uri: Uri.file('/ws/app.py') },
    selection: { start, end, isEmpty: from === to },
  };
  return { doc };
}

describe('planCodeApply', () => {
  it('replaces the selection, or the whole file when nothing is selected', () => {
    const before = 'a = 1\nb = 2\nc = 3\n';
    expect(planCodeApply(before, 'B = 20', { start: 6, end: 11, lines: [1, 1] }))
      .toEqual({ after: 'a = 1\nB = 20\nc = 3\n', scope: 'the selection (line 2)' });
    expect(planCodeApply(before, 'x', { start: 0, end: 11, lines: [0, 1] }).scope).toBe('the selection (lines 1-2)');
    expect(planCodeApply(before, 'new\n', null)).toEqual({ after: 'new\n', scope: 'the whole file' });
    expect(planCodeApply(before, 'new\n', { start: 4, end: 4, lines: [0, 0] }).scope).toBe('the whole file');
  });
});

describe('applyWithPreview', () => {
  beforeEach(() => {
    created.commands.length = 0;
    created.applied.length = 0;
    created.messages.length = 0;
    answers.choice = undefined;
  });

  it('shows the diff, then replaces the selection through an undoable WorkspaceEdit once confirmed', async () => {
    const provider = registerApplyPreview();
    fakeEditor('a = 1\nb = 2\nc = 3\n', 6, 11);
    let previewed = '';
    const realExecute = vscode.commands.executeCommand;
    (vscode.commands as { executeCommand: unknown }).executeCommand = async (command: string, ...args: unknown[]) => {
      created.commands.push({ command, args });
      previewed = created.providers.get(PREVIEW_SCHEME)?.provideTextDocumentContent(args[1] as Uri) ?? '';
    };
    answers.choice = 'Apply';
    try {
      expect(await applyWithPreview('B = 20')).toBeNull();
    } finally {
      (vscode.commands as { executeCommand: unknown }).executeCommand = realExecute;
      provider.dispose();
    }
    expect(created.commands[0]?.command).toBe('vscode.diff');
    expect(created.commands[0]?.args[2]).toBe('app.py: apply the code block to the selection (line 2)');
    expect(previewed).toBe('a = 1\nB = 20\nc = 3\n'); // the right side is the file as it would read
    expect(created.messages.at(-1)?.text).toBe('Replace the selection (line 2) of app.py with the code block? (Undo reverts it.)');
    const edit = created.applied[0] as WorkspaceEdit;
    expect(edit.replaced).toHaveLength(1);
    expect(edit.replaced[0]?.text).toBe('B = 20');
    expect(edit.replaced[0]?.range).toEqual(new Range(new Position(1, 0), new Position(1, 5)));
  });

  it('changes nothing when the user declines, and refuses a file edited during the preview', async () => {
    fakeEditor('x = 1\n', 0, 0);
    expect(await applyWithPreview('y = 2\n')).toBeNull(); // dismissed
    expect(created.applied).toHaveLength(0);
    expect(created.messages.at(-1)).toEqual({ level: 'status', text: 'Contenox: code block not applied' });
    expect(String(created.commands.at(-1)?.args[2])).toContain('the whole file');

    const { doc } = fakeEditor('x = 1\n', 0, 0);
    const realInfo = window.showInformationMessage;
    window.showInformationMessage = async (text: string) => {
      doc.version += 1; // the user typed in the file while the diff was open
      return realInfo(text).then(() => 'Apply');
    };
    try {
      expect(await applyWithPreview('y = 2\n')).toBe('app.py changed during the preview; apply again');
    } finally {
      window.showInformationMessage = realInfo;
    }
    expect(created.applied).toHaveLength(0);
  });

  it("opens the diff beside the chat's editor panel, not over it; in the active group when the chat is a view", async () => {
    fakeEditor('x = 1\n', 0, 0);
    const visible = window.visibleTextEditors;
    try {
      trackChatColumn(() => ViewColumn.Two); // the chat panel in the second group, main.py in the first
      window.visibleTextEditors = [{ viewColumn: ViewColumn.One }];
      expect(diffOptions()).toEqual({ preview: true, viewColumn: ViewColumn.One });
      await applyWithPreview('y = 2\n');
      expect(created.commands.at(-1)?.args[3]).toEqual({ preview: true, viewColumn: ViewColumn.One });
      window.visibleTextEditors = []; // no editor beside the chat: a new group beside it
      expect(diffOptions()).toEqual({ preview: true, viewColumn: ViewColumn.Beside });
      trackChatColumn(() => undefined); // the chat in the sidebar
      expect(diffOptions()).toEqual({ preview: true });
    } finally {
      window.visibleTextEditors = visible;
      trackChatColumn(() => undefined);
    }
  });

  it('says what to do when no editor is open', async () => {
    window.activeTextEditor = undefined;
    expect(await applyWithPreview('z')).toBe('open a file (and select the lines to replace) to apply the code to');
  });
});
