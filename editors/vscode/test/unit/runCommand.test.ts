import { describe, expect, it } from 'vitest';
import { runCommandAfterAsking, runInShell, type CommandRunner } from '../../src/runCommand';

function runner(allow: boolean, ran: string[]): CommandRunner {
  return {
    confirm: async () => allow,
    run: async (command, cwd, timeoutMs) => {
      ran.push(command);
      return runInShell(command, cwd, timeoutMs);
    },
  };
}

describe('runCommandAfterAsking', () => {
  it('runs only what the user allows, in the workspace, and returns its exit code and output', async () => {
    const ran: string[] = [];
    const params = { chatId: 'c1', id: 'step1-0', command: 'echo "in $(pwd)"; echo oops >&2; exit 3', cwd: '/tmp' };
    expect(await runCommandAfterAsking(params, runner(false, ran))).toEqual({ ran: false, reason: 'the user did not allow it' });
    expect(ran).toEqual([]);
    const done = await runCommandAfterAsking(params, runner(true, ran));
    expect(done.ran).toBe(true);
    expect(done.exitCode).toBe(3);
    expect(done.output).toContain('in /tmp');
    expect(done.output).toContain('oops'); // stderr too
  });

  it('stops a command that runs past the time limit and says so', async () => {
    const done = await runCommandAfterAsking({ chatId: null, id: 's', command: 'sleep 5', cwd: '/tmp' },
      runner(true, []), 200);
    expect(done).toEqual({ ran: false, output: '', reason: 'it ran past 0 s and was stopped' });
  });

  it('streams the output to the channel as it comes', async () => {
    const seen: string[] = [];
    const done = await runInShell('printf a; printf b', '/tmp', 5000, { append: (t) => seen.push(t) });
    expect(seen.join('')).toBe('ab');
    expect(done).toEqual({ exitCode: 0, output: 'ab', timedOut: false });
  });
});
