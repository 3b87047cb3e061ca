// Opt-in end-to-end test (npm run test:e2e) of inline completions: ghost text from the node's
// fill-in-the-middle model in a real VS Code workbench (see ./workbench.ts), accepted with Tab.
// The model is about 600 MB: set CONTENOX_E2E_MODELS_DIR (e.g. ~/.contenox/models) to link one already
// pulled; otherwise it is pulled once into the shared test home.
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useWorkbench } from './workbench';

const FIM_MODEL = 'qwen2.5-coder-0.5b';

/** An empty function body on line 3 (4 spaces), with a caller below for the suffix. */
const SOURCE = 'def add(a, b):\n    """Return the sum of a and b."""\n    \n\n\nprint(add(1, 2))\n';
const BODY_LINE = 3;
const INDENT = '    ';
const TYPED = 'ret';

/** Ghost text: the inline part after the cursor (in the line) and further lines (a view zone). */
const GHOST = '.ghost-text-decoration, .ghost-text';

const workbench = useWorkbench({
  model: FIM_MODEL,
  files: { 'add.py': SOURCE },
  // Only ghost text: no suggest widget to take the Tab.
  settings: {
    'editor.inlineSuggest.enabled': true,
    'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
    'editor.suggestOnTriggerCharacters': false,
    'editor.wordBasedSuggestions': 'off',
  },
});

const plain = (text: string): string => text.replace(/\u00a0/g, ' ');

/** The editor's lines as typed: Monaco renders the inline ghost text inside the line, so leave it out. */
function typedLines(editor: Locator): Promise<string[]> {
  return editor.locator('.view-lines > .view-line').evaluateAll((lines) => lines.map((line) => {
    const copy = line.cloneNode(true) as HTMLElement;
    copy.querySelectorAll('.ghost-text-decoration, .ghost-text-decoration-preview').forEach((g) => g.remove());
    return (copy.textContent ?? '').replace(/\u00a0/g, ' ');
  }));
}

describe('inline completions in a real VS Code workbench', () => {
  it('the status bar item says completions are on, from the FIM model', async () => {
    const wb = workbench();
    await wb.statusItem(/no turn yet|cached/).first().waitFor({ timeout: 180_000 });
    const item = wb.statusItem(/Contenox: completions/).first();
    // The tooltip names the model once the node has answered contenox/completionInfo.
    await expect.poll(async () => {
      await wb.page.mouse.move(640, 300);
      await item.hover();
      await wb.page.waitForTimeout(1_500);
      return (await wb.page.locator('.workbench-hover, .monaco-hover').allTextContents()).join(' ');
    }, { timeout: 60_000, interval: 1_000 }).toContain(`from ${FIM_MODEL}`);
    expect(await item.textContent()).toContain('completions on');
  });

  it('ghost text appears in an empty function body and Tab accepts it', async () => {
    const wb = workbench();
    await wb.page.mouse.move(640, 300);
    await wb.openFile('add.py');
    const editor = wb.page.locator('.editor-instance .monaco-editor').first();
    await editor.locator('.view-line', { hasText: 'def add(a, b):' }).waitFor({ timeout: 30_000 });
    await wb.goTo(BODY_LINE, INDENT.length + 1);
    await wb.page.keyboard.press('End');
    await wb.page.keyboard.type(TYPED, { delay: 80 });

    const ghost = editor.locator(GHOST).first();
    try {
      await ghost.waitFor({ timeout: 90_000 });
    } catch {
      // The first request may have met a node still loading its model: ask once more, explicitly.
      await wb.runCommand('Trigger Inline Suggestion');
      await ghost.waitFor({ timeout: 120_000 });
    }
    const shown = plain((await editor.locator(GHOST).allTextContents()).join('\n'));
    expect(shown.trim()).not.toBe('');
    const inline = plain((await editor.locator('.ghost-text-decoration').allTextContents()).join('')).trimEnd();
    await wb.screenshot('inline-completion.png');

    await wb.page.keyboard.press('Tab');
    const typed = `${INDENT}${TYPED}`;
    await expect.poll(async () => {
      const line = (await typedLines(editor)).find((l) => l.startsWith(typed)) ?? '';
      return line.length > typed.length && line.includes(inline.trim());
    }, { timeout: 15_000 }).toBe(true);
  });
});
