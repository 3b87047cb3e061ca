import { describe, expect, it } from 'vitest';
import {
  ALLOW, ALLOW_CHECK, ALLOW_CHECK_MESSAGE, DECLINE, allowCheckAfterAsking, allowCheckDetail, type AskModal,
} from '../../src/allowCheck';

/** A dialog that answers `choice` and records what it was asked. */
function dialog(choice: string | undefined, asked: { message: string; detail: string; choices: string[] }[]): AskModal {
  return async (message, detail, ...choices) => {
    asked.push({ message, detail, choices });
    return choice;
  };
}

const PARAMS = { chatId: 'chat-1', command: 'python -m pytest -q -x tests/test_util.py', cwd: '/home/u/proj' };

describe('allowCheckAfterAsking', () => {
  it('is the contenox/allowCheck request', () => {
    expect(ALLOW_CHECK).toBe('contenox/allowCheck');
  });

  it('asks in a dialog that names the command, the scratch copy and how to forget the answer', async () => {
    const asked: { message: string; detail: string; choices: string[] }[] = [];
    expect(await allowCheckAfterAsking(PARAMS, dialog(ALLOW, asked))).toEqual({ allowed: true });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).toBe(ALLOW_CHECK_MESSAGE);
    expect(asked[0]!.choices).toEqual(['Allow in this workspace', "Don't run"]);
    const detail = asked[0]!.detail;
    expect(detail).toBe(allowCheckDetail(PARAMS.command, PARAMS.cwd));
    expect(detail.startsWith(`${PARAMS.command}\n\n`)).toBe(true);
    expect(detail).toContain('/home/u/proj');
    expect(detail).toContain('scratch copy of the workspace');
    expect(detail).toContain('your files are not touched');
    expect(detail).toContain('remembered for this workspace');
    expect(detail).toContain('`contenox verify off`');
  });

  it('says what else the answer covers when the node names it', async () => {
    const asked: { message: string; detail: string; choices: string[] }[] = [];
    const scope = "the project's other tests run the same way (`python -m pytest -q` with other test files)";
    expect(await allowCheckAfterAsking({ ...PARAMS, scope }, dialog(ALLOW, asked))).toEqual({ allowed: true });
    expect(asked[0]!.detail).toContain(`Allowing it also allows ${scope}.`);
    expect(asked[0]!.detail.startsWith(`${PARAMS.command}\n\n`)).toBe(true);
    await allowCheckAfterAsking({ ...PARAMS, scope: 7 }, dialog(ALLOW, asked)); // not words: nothing said
    expect(asked[1]!.detail).toBe(allowCheckDetail(PARAMS.command, PARAMS.cwd));
    expect(asked[1]!.detail).not.toContain('also allows');
  });

  it("answers false for Don't run and null when the dialog is dismissed (the node asks again)", async () => {
    expect(await allowCheckAfterAsking(PARAMS, dialog(DECLINE, []))).toEqual({ allowed: false });
    expect(await allowCheckAfterAsking({ ...PARAMS, chatId: null }, dialog(undefined, []))).toEqual({ allowed: null });
    expect(await allowCheckAfterAsking(PARAMS, dialog('Cancel', []))).toEqual({ allowed: null });
  });

  it('asks nothing for a request without a command or folder', async () => {
    const asked: { message: string; detail: string; choices: string[] }[] = [];
    for (const bad of [null, undefined, 'pytest', {}, { ...PARAMS, command: 3 }, { ...PARAMS, command: '  ' },
      { ...PARAMS, cwd: undefined }]) {
      expect(await allowCheckAfterAsking(bad, dialog(ALLOW, asked))).toEqual({ allowed: null });
    }
    expect(asked).toEqual([]);
  });
});
