// An agent turn's `run_command`, run by the editor: the node asks (`contenox/runCommand`), the user decides in a
// modal dialog, and only then the command runs in the workspace, its output shown in the "Contenox Commands"
// output channel as it comes and returned to the node (which gives it to the model).

import * as cp from 'node:child_process';
import * as vscode from 'vscode';
import { Methods } from './protocol';

export const RUN_COMMAND = Methods.runCommand;
/** The experimental client capability that tells the node this editor runs commands. */
export const RUN_COMMAND_CAPABILITY = 'contenoxRunCommand';
const MAX_OUTPUT = 64_000;

export interface RunCommandParams { chatId: string | null; id: string; command: string; cwd: string }
export interface RunCommandResult { ran: boolean; exitCode?: number | null; output?: string; reason?: string }

export interface CommandRunner {
  /** Ask the user; true to run. */
  confirm(command: string, cwd: string): Promise<boolean>;
  /** Run to the end (or the timeout); its exit code and output. */
  run(command: string, cwd: string, timeoutMs: number): Promise<{ exitCode: number | null; output: string; timedOut: boolean }>;
}

/** Run `params.command` if the user allows it; what the node is told. */
export async function runCommandAfterAsking(params: RunCommandParams, runner: CommandRunner,
  timeoutMs = 300_000): Promise<RunCommandResult> {
  if (!(await runner.confirm(params.command, params.cwd))) return { ran: false, reason: 'the user did not allow it' };
  const done = await runner.run(params.command, params.cwd, timeoutMs);
  if (done.timedOut) {
    return { ran: false, output: done.output, reason: `it ran past ${Math.round(timeoutMs / 1000)} s and was stopped` };
  }
  return { ran: true, exitCode: done.exitCode, output: done.output };
}

/** `sh -c command` in `cwd`, stdout and stderr together (the last 64 kB), streamed to `channel`. */
export function runInShell(command: string, cwd: string, timeoutMs: number,
  channel?: { append(text: string): void }): Promise<{ exitCode: number | null; output: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = cp.spawn('/bin/sh', ['-c', command], { cwd, detached: true }); // its own group: killed whole
    let output = '';
    let timedOut = false;
    const take = (data: Buffer): void => {
      const text = data.toString('utf8');
      channel?.append(text);
      output = (output + text).slice(-MAX_OUTPUT);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ exitCode: null, output: `${output}${err.message}`, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ exitCode: code, output, timedOut });
    });
  });
}

/** The runner VS Code uses: a modal dialog, then the shell with the output channel shown. */
export function editorRunner(channel: vscode.OutputChannel): CommandRunner {
  return {
    confirm: async (command, cwd) => (await vscode.window.showWarningMessage('Contenox wants to run a command',
      { modal: true, detail: `${command}\n\nin ${cwd}` }, 'Run')) === 'Run',
    run: (command, cwd, timeoutMs) => {
      channel.appendLine(`$ ${command}    (in ${cwd})`);
      channel.show(true);
      return runInShell(command, cwd, timeoutMs, channel).then((done) => {
        channel.appendLine(done.timedOut ? '[stopped: time limit]' : `[exit code ${done.exitCode}]`);
        return done;
      });
    },
  };
}
