import { describe, expect, it } from 'vitest';
import * as vscode from 'vscode';
import { kindSelectionActions, withQuestion } from '../../src/selectionActions';

const mock = vscode as unknown as typeof import('../mocks/vscode');

function nodeAction(title: string, command: string): vscode.CodeAction {
  const action = new mock.CodeAction(title, mock.CodeActionKind.Empty);
  action.command = { title, command, arguments: [{ uri: 'file:///ws/a.py' }] };
  return action as unknown as vscode.CodeAction;
}

const offered = (): vscode.CodeAction[] => [
  nodeAction('Explain selection', 'contenox.explainSelection'),
  nodeAction('Find related code', 'contenox.findRelated'),
  nodeAction('Ask Contenox about selection', 'contenox.askSelection'),
];

describe('kindSelectionActions', () => {
  it("gives the node's selection actions the product's name and kinds that sort first", () => {
    const shown = kindSelectionActions(offered()) as vscode.CodeAction[];
    expect(shown.map((a) => [a.title, a.kind?.value, a.isPreferred ?? false, a.command?.title])).toEqual([
      ['Contenox: Explain Selection', 'quickfix.contenox.explain', true, 'Contenox: Explain Selection'],
      ['Contenox: Find Related Code', 'quickfix.contenox.related', false, 'Contenox: Find Related Code'],
      ['Contenox: Ask About Selection…', 'refactor.rewrite.contenox.ask', false, 'Contenox: Ask About Selection…'],
    ]);
  });

  it('keeps only the kinds the editor asked for and passes other actions through', () => {
    const other = nodeAction('Organize', 'x.organize');
    const plain = { title: 'a command', command: 'x.cmd' } as vscode.Command;
    expect(kindSelectionActions([...offered(), other, plain], mock.CodeActionKind.QuickFix as unknown as vscode.CodeActionKind)!
      .map((a) => a.title)).toEqual(['Contenox: Explain Selection', 'Contenox: Find Related Code', 'Organize', 'a command']);
    expect(kindSelectionActions(offered(), mock.CodeActionKind.Refactor as unknown as vscode.CodeActionKind)!
      .map((a) => a.title)).toEqual(['Contenox: Ask About Selection…']);
    expect(kindSelectionActions(offered(), mock.CodeActionKind.SourceOrganizeImports as unknown as vscode.CodeActionKind))
      .toEqual([]);
    expect(kindSelectionActions(null)).toBeNull();
  });
});

describe('withQuestion', () => {
  const arg = { uri: 'file:///ws/a.py', range: { start: { line: 0, character: 0 }, end: { line: 2, character: 0 } } };

  it('asks for the question before Ask About Selection is sent', async () => {
    let asked = 0;
    const args = await withQuestion('contenox.askSelection', [arg], async () => { asked += 1; return '  why?  '; });
    expect(asked).toBe(1);
    expect(args).toEqual([{ ...arg, prompt: 'why?' }]);
  });

  it('sends nothing when the box is dismissed or left empty', async () => {
    expect(await withQuestion('contenox.askSelection', [arg], async () => undefined)).toBeUndefined();
    expect(await withQuestion('contenox.askSelection', [arg], async () => '   ')).toBeUndefined();
  });

  it('does not ask for other commands or an ask that has its question', async () => {
    const never = async (): Promise<string> => { throw new Error('asked'); };
    expect(await withQuestion('contenox.explainSelection', [arg], never)).toEqual([arg]);
    expect(await withQuestion('contenox.askSelection', [{ ...arg, prompt: 'how?' }], never))
      .toEqual([{ ...arg, prompt: 'how?' }]);
  });
});
