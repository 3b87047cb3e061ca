// The node's selection code actions (Explain Selection, Find Related Code, Ask About Selection) as VS Code shows
// them: the node offers them without a kind, which the light bulb hides under "More Actions…"; here they carry the
// product's name and quick-fix / refactor kinds, so they sort first when a selection exists. Ask About Selection
// asks for the question before anything is sent.

import * as vscode from 'vscode';
import { ServerCommands } from './protocol';

interface Shown { title: string; kind: vscode.CodeActionKind; preferred: boolean }

/** How each selection command is shown in the light bulb (the menus use the same titles). */
function shownAs(command: string): Shown | undefined {
  switch (command) {
    case ServerCommands.explainSelection:
      return { title: 'Contenox: Explain Selection', kind: vscode.CodeActionKind.QuickFix.append('contenox.explain'),
        preferred: true };
    case ServerCommands.findRelated:
      return { title: 'Contenox: Find Related Code', kind: vscode.CodeActionKind.QuickFix.append('contenox.related'),
        preferred: false };
    case ServerCommands.askSelection:
      return { title: 'Contenox: Ask About Selection…',
        kind: vscode.CodeActionKind.RefactorRewrite.append('contenox.ask'), preferred: false };
    default:
      return undefined;
  }
}

type Provided = vscode.Command | vscode.CodeAction;

/**
 * The node's code actions with their kind, title and preference set; those `only` (the kinds the editor asked
 * for, e.g. source actions on save) excludes are dropped. Other actions pass unchanged.
 */
export function kindSelectionActions(actions: readonly Provided[] | null | undefined,
  only?: vscode.CodeActionKind): Provided[] | null | undefined {
  if (!actions) return actions;
  const out: Provided[] = [];
  for (const action of actions) {
    const command = 'command' in action && action.command && typeof action.command === 'object'
      ? action.command : undefined;
    const shown = command ? shownAs(command.command) : undefined;
    if (!shown || !(action instanceof vscode.CodeAction)) {
      out.push(action);
      continue;
    }
    if (only && !only.contains(shown.kind)) continue;
    action.title = shown.title;
    action.kind = shown.kind;
    if (shown.preferred) action.isPreferred = true;
    if (command) command.title = shown.title;
    out.push(action);
  }
  return out;
}

/**
 * The arguments Ask About Selection is sent with: the question the user typed added as `prompt` (the node's
 * argument), or undefined when the user dismissed the box (nothing is sent). Other commands, and an ask that
 * already has its question, pass unchanged.
 */
export async function withQuestion(command: string, args: unknown[],
  ask: () => Thenable<string | undefined> | Promise<string | undefined>): Promise<unknown[] | undefined> {
  if (command !== ServerCommands.askSelection) return args;
  const first = args[0];
  if (!first || typeof first !== 'object' || Array.isArray(first)) return args;
  const prompt = (first as { prompt?: unknown }).prompt;
  if (typeof prompt === 'string' && prompt.trim() !== '') return args;
  const question = await ask();
  if (question === undefined || question.trim() === '') return undefined;
  return [{ ...(first as Record<string, unknown>), prompt: question.trim() }, ...args.slice(1)];
}

/** The input box Ask About Selection shows. */
export function askQuestion(): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: 'Contenox: Ask About Selection',
    prompt: 'What do you want to know about the selected code?',
    placeHolder: 'e.g. why can this raise KeyError?',
    ignoreFocusOut: true,
  });
}
