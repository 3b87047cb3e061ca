// Opt-in end-to-end test (npm run test:e2e): Apply on a chat code block that names no file and defines nothing in
// the workspace replaces the selection, in a real VS Code workbench, with Qwen2.5-Coder-0.5B (it copies a given
// block; SmolLM2 does not reliably).
// The model is about 600 MB: set CONTENOX_E2E_MODELS_DIR to link one already pulled.
import { describe, expect, it } from 'vitest';
import { useWorkbench } from './workbench';

const workbench = useWorkbench({ model: 'qwen2.5-coder-0.5b' });

describe('Apply on a chat code block in a real VS Code workbench', () => {
  it('Apply on a code block shows a diff, then replaces the selection once confirmed (undoable)', async () => {
    const wb = workbench();
    await wb.page.locator('.monaco-workbench').click({ position: { x: 640, y: 400 } });
    await wb.openFile('main.py');
    await wb.runCommand('Contenox: Open Chat', 'Open Chat');
    const chat = wb.page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    await chat.locator('#prompt').waitFor({ timeout: 60_000 });
    // The block is given (what the 0.5B writes unasked varies, and 48 tokens may cut it): what is tested is Apply.
    await chat.locator('#prompt').fill('Reply with exactly these lines and nothing else:\n' +
      '```python\ndef add(a, b):\n    return a + b\n```');
    await chat.locator('#prompt').press('Enter');
    const block = chat.locator('section.answer.done').last().locator('.code-block').first();
    await block.waitFor({ timeout: 300_000 });
    const code = (await block.locator('pre code').textContent()) ?? '';
    await wb.page.keyboard.press('Control+1'); // the first editor group (the chat stays beside it)
    await wb.openFile('util.py');
    const editor = wb.page.locator('.editor-group-container.active .monaco-editor').first();
    await editor.locator('.view-line', { hasText: 'def helper' }).first().click();
    await wb.page.keyboard.press('Control+Home');
    await wb.page.keyboard.press('Shift+End'); // the first line is what the block replaces
    await block.locator('button.apply-code').click();
    const dialog = wb.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 30_000 });
    expect(await dialog.textContent()).toContain('Replace the selection (line 1) of util.py with the code block?');
    expect(await wb.page.locator('.tabs-container .tab', { hasText: 'apply the code block' }).count()).toBe(1);
    await wb.screenshot('workbench-apply.png'); // the diff behind the question
    await dialog.locator('a.monaco-button, button', { hasText: 'Apply' }).first().click();
    await dialog.waitFor({ state: 'hidden', timeout: 30_000 });
    await wb.page.keyboard.press('Control+1');
    await wb.page.keyboard.press('Control+W'); // close the diff: util.py's own editor shows again
    const lines = wb.page.locator('.editor-group-container.active .view-line');
    const firstLine = (code.split('\n').find((line) => line.trim()) ?? 'no code').trim();
    await lines.filter({ hasText: firstLine }).first().waitFor({ timeout: 30_000 });
    expect(await lines.filter({ hasText: 'return x + 1' }).count()).toBe(1); // only line 1 was replaced
    await lines.filter({ hasText: firstLine }).first().click();
    await wb.page.keyboard.press('Control+Z'); // the WorkspaceEdit undoes like any edit
    await expect.poll(async () => lines.filter({ hasText: 'def helper(x):' }).count(), { timeout: 30_000 }).toBe(1);
  });
});
