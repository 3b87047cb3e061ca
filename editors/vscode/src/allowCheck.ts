// A verified fix's consent: before the node tests candidate fixes with a check command (the project's tests) it asks
// once per workspace and command (`contenox/allowCheck`). The user decides in a modal dialog; the node remembers the
// answer (`contenox verify off` forgets it). Dismissing the dialog decides nothing: the node asks again next time.

import * as vscode from 'vscode';
import { Methods } from './protocol';

export const ALLOW_CHECK = Methods.allowCheck;
export const ALLOW = 'Allow in this workspace';
export const DECLINE = "Don't run";

/** `scope`: what else the answer covers, in the node's words ('' or absent: nothing more). */
export interface AllowCheckParams { chatId: string | null; command: string; cwd: string; scope?: string }
/** true: run it; false: never (in this workspace); null: nobody decided (the dialog was dismissed). */
export interface AllowCheckResult { allowed: boolean | null }

/** Shows a modal question with `choices`; the chosen one, or undefined when dismissed. */
export type AskModal = (message: string, detail: string, ...choices: string[]) => Promise<string | undefined>;

export const ALLOW_CHECK_MESSAGE = 'Contenox wants to test its proposed fix by running a command';

/** What the dialog says under its message. */
export function allowCheckDetail(command: string, cwd: string, scope = ''): string {
  const also = scope.trim() ? `Allowing it also allows ${scope.trim()}.\n\n` : '';
  return `${command}\n\nin a scratch copy of ${cwd}\n\n${also}` +
    'Contenox tries its candidate fixes in a scratch copy of the workspace and runs this command there to ' +
    "check them: it runs your project's code, but your files are not touched. " +
    'The answer is remembered for this workspace (`contenox verify off` in a terminal forgets it).';
}

/** Ask the user whether the node may run `params.command`; what the node is told. */
export async function allowCheckAfterAsking(params: unknown, ask: AskModal): Promise<AllowCheckResult> {
  const p = params as Partial<AllowCheckParams> | null;
  if (typeof p !== 'object' || p === null || typeof p.command !== 'string' || p.command.trim() === '' ||
    typeof p.cwd !== 'string') {
    return { allowed: null }; // nothing a user could decide on
  }
  const scope = typeof p.scope === 'string' ? p.scope : '';
  const choice = await ask(ALLOW_CHECK_MESSAGE, allowCheckDetail(p.command, p.cwd, scope), ALLOW, DECLINE);
  return { allowed: choice === ALLOW ? true : choice === DECLINE ? false : null };
}

/** The question VS Code asks: a modal warning (its Cancel, or Escape, dismisses it). */
export const editorAsk: AskModal = (message, detail, ...choices) =>
  Promise.resolve(vscode.window.showWarningMessage(message, { modal: true, detail }, ...choices));
