// Opt-in end-to-end tests (npm run test:e2e) of issue 31's labels, flows and answer hygiene in a real VS Code
// workbench (see ./workbench.ts) with Qwen2.5-Coder-0.5B: Pin / Unpin only where they apply, the selection's menu
// items named "Contenox: …" in one casing, Ask About Selection asking for the question first, numbered lists that
// keep their numbers and no instruction text in the answer, a repetition stop said under the answer, a thread
// switched back to with its explain lines and notes, and a rename's per-file diffs shown beside the chat and
// applied together. Answers may run to 160 tokens here, and greedy decoding has no repetition penalty (the node's
// `repetition_penalty = 1.0`): with the harness's 48 tokens and the default penalty, which makes the 0.5B number
// the lines it is asked to repeat, no loop of 240 characters could form for the guard to stop.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, FrameLocator, Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useWorkbench, type Workbench } from './workbench';

const workbench = useWorkbench({
  model: 'qwen2.5-coder-0.5b',
  engine: { max_new_tokens: 160, repetition_penalty: 1.0 },
  settings: { 'workbench.secondarySideBar.defaultVisibility': 'hidden' },
});

/** The chat panel's tab (not the diff's, whose title starts with the product's name too). */
const CHAT_TAB = /^\s*Contenox\s*$/;

/** The chat's page (the webview's inner frame). */
function chat(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
}

async function chatFrame(page: Page): Promise<Frame | undefined> {
  for (const frame of page.frames()) {
    if (await frame.$('#prompt').catch(() => null)) return frame;
  }
  return undefined;
}

/** New chat: an empty thread. */
async function newChat(page: FrameLocator): Promise<void> {
  await page.locator('#new-chat').click();
  await page.locator('#empty').waitFor({ state: 'visible', timeout: 30_000 });
}

async function ask(page: Page, question: string): Promise<void> {
  const prompt = chat(page).locator('#prompt');
  await prompt.fill(question);
  await prompt.press('Enter');
}

/** The active editor's text area (the first editor group's). */
function editorLines(wb: Workbench): Locator {
  return wb.page.locator('.editor-instance .monaco-editor .view-lines').first();
}

/** The labels of the context menu a right-click on `target` opens (closed again unless `keepOpen`). */
async function contextMenu(wb: Workbench, target: Locator, keepOpen = false): Promise<string[]> {
  await target.click({ button: 'right' });
  const menu = wb.page.locator('.monaco-menu').first();
  await menu.waitFor({ timeout: 30_000 });
  const labels = (await menu.locator('.action-item .action-label').allTextContents()).map((l) => l.trim());
  if (!keepOpen) {
    await wb.page.keyboard.press('Escape');
    await menu.waitFor({ state: 'hidden' });
  }
  return labels;
}

/** Choose `label` from the context menu a right-click on `target` opens (a click on a web workbench's menu item
 * does not reach it: the item is focused by hovering and chosen with Enter, as from the keyboard). */
async function chooseFromMenu(wb: Workbench, target: Locator, label: string): Promise<void> {
  await contextMenu(wb, target, true);
  const item = wb.page.locator('.monaco-menu .action-item', { hasText: label }).first();
  await item.hover();
  await wb.page.keyboard.press('Enter');
  await wb.page.locator('.monaco-menu').first().waitFor({ state: 'hidden', timeout: 30_000 });
}

/** The numbers an answer's ordered lists show, in order (an `ol`'s items count up from its `start`). */
async function listNumbers(frame: Frame, answerIndex: number): Promise<number[]> {
  return frame.evaluate((index) => {
    const answer = document.querySelectorAll('section.answer.done')[index];
    const numbers: number[] = [];
    for (const ol of Array.from(answer?.querySelectorAll('.markdown ol') ?? [])) {
      const start = Number((ol as HTMLOListElement).start || 1);
      ol.querySelectorAll(':scope > li').forEach((_li, i) => numbers.push(start + i));
    }
    return numbers;
  }, answerIndex);
}

describe("issue 31's labels, flows and answer hygiene in a real VS Code workbench", () => {
  it('Pin File and Unpin File show in the editor and explorer context menus only when they apply', async () => {
    const wb = workbench();
    await wb.statusItem(/no turn yet|cached/).first().waitFor({ timeout: 180_000 });
    await wb.page.locator('.monaco-workbench').click({ position: { x: 640, y: 400 } });
    await wb.openFile('util.py');
    const before = await contextMenu(wb, editorLines(wb));
    expect(before).toContain('Contenox: Pin File');
    expect(before).not.toContain('Contenox: Unpin File');

    await wb.runCommand('Contenox: Pin File', 'Pin File');
    await expect.poll(async () => contextMenu(wb, editorLines(wb)), { timeout: 60_000 })
      .toContain('Contenox: Unpin File');
    expect(await contextMenu(wb, editorLines(wb))).not.toContain('Contenox: Pin File');
    await wb.runCommand('View: Show Explorer', 'Show Explorer');
    const row = wb.page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'util.py' }).first();
    await row.waitFor({ timeout: 30_000 });
    const explorer = await contextMenu(wb, row);
    expect(explorer).toContain('Contenox: Unpin File');
    expect(explorer).not.toContain('Contenox: Pin File');

    // Unpinned from the editor's menu: Pin File is back, Unpin File gone.
    await chooseFromMenu(wb, editorLines(wb), 'Contenox: Unpin File');
    await expect.poll(async () => contextMenu(wb, editorLines(wb)), { timeout: 60_000 })
      .toContain('Contenox: Pin File');
    expect(await contextMenu(wb, editorLines(wb))).not.toContain('Contenox: Unpin File');
  });

  it("a selection's menu items carry the product's name, in one casing", async () => {
    const wb = workbench();
    await wb.openFile('main.py');
    await editorLines(wb).click();
    await wb.page.keyboard.press('Control+A');
    const labels = (await contextMenu(wb, editorLines(wb), true)).filter((l) => /contenox/i.test(l));
    await wb.screenshot('workbench-selection-menu.png'); // the menu open
    await wb.page.keyboard.press('Escape');
    for (const item of ['Contenox: Explain Selection', 'Contenox: Find Related Code', 'Contenox: Ask About Selection…',
      'Contenox: Pin Selected Lines', 'Contenox: Pin File']) {
      expect(labels).toContain(item);
    }
    for (const label of labels) expect(label).toMatch(/^Contenox: [A-Z][a-z]*( [A-Z][a-z]*)*…?$/);
  });

  it('Ask About Selection asks for the question before it sends; dismissed, nothing is sent', async () => {
    const wb = workbench();
    await chooseFromMenu(wb, editorLines(wb), 'Contenox: Ask About Selection'); // main.py, everything selected
    const box = wb.page.locator('.quick-input-widget');
    await box.waitFor({ state: 'visible', timeout: 30_000 });
    expect(await box.textContent()).toContain('Contenox: Ask About Selection');
    await wb.page.keyboard.press('Escape');
    await box.waitFor({ state: 'hidden' });
    await new Promise((r) => setTimeout(r, 2_000));
    const frame = await chatFrame(wb.page);
    expect(frame ? await frame.locator('.question').count() : 0).toBe(0); // nothing was sent

    await wb.runCommand('Contenox: Ask About Selection', 'Ask About Selection');
    await box.locator('.quick-input-title', { hasText: 'Ask About Selection' }).waitFor({ timeout: 30_000 });
    await box.locator('input').fill('What does run return?');
    await wb.page.keyboard.press('Enter');
    const page = chat(wb.page);
    await page.locator('.question', { hasText: 'What does run return?' }).first().waitFor({ timeout: 60_000 });
    await page.locator('section.answer.done').first().waitFor({ timeout: 300_000 });
    expect(await page.locator('.question').count()).toBe(1);
  });

  it('a numbered list keeps its numbers; no instruction text leaks into the answer', async () => {
    const wb = workbench();
    const page = chat(wb.page);
    // The lines are given (what the 0.5B writes unasked varies): the items stand apart, as models write them.
    await ask(wb.page, 'Reply with exactly these lines and nothing else:\n\n1. helper adds one to x.\n\n' +
      '2. run calls helper with 41.\n\n3. run returns 42.');
    const answer = page.locator('section.answer.done').nth(1);
    await answer.waitFor({ timeout: 300_000 });
    const frame = await chatFrame(wb.page);
    const numbers = await listNumbers(frame!, 1);
    expect(numbers, await answer.locator('.markdown').innerHTML()).toEqual([1, 2, 3]); // never 1. 1. 1.
    const text = (await page.locator('section.answer.done .markdown').allTextContents()).join('\n');
    for (const leak of ['Answer in this order', 'if the question asks for a change', 'changes proposed',
      'the edit blocks', 'You are Contenox']) {
      expect(text).not.toContain(leak);
    }
  });

  it('an answer cut at the length limit says so under it, with a Continue button', async () => {
    const wb = workbench();
    const page = chat(wb.page);
    await newChat(page); // each given text in a thread of its own: in a longer one the 0.5B repeats its last answer
    const steps = Array.from({ length: 30 }, (_s, i) => `Step ${i + 1}: check the value ${i + 1}.`).join('\n');
    await ask(wb.page, `Steps. Reply with exactly these lines and nothing else:\n\n${steps}`); // over 160 tokens
    const long = page.locator('section.answer.done').first();
    await long.waitFor({ timeout: 300_000 });
    await long.locator('.note.truncated button.continue').waitFor({ timeout: 5_000 });
    expect(await long.locator('.note.repeated').count()).toBe(0);
  });

  it('an answer that starts repeating itself is stopped, and the note under it says so', async () => {
    const wb = workbench();
    const page = chat(wb.page);
    await newChat(page);
    await ask(wb.page, `Loop. Reply with exactly these lines and nothing else:\n\n${'helper(x) returns x + 1.\n'.repeat(14)}`);
    const answer = page.locator('section.answer.done').first();
    await answer.waitFor({ timeout: 300_000 });
    const note = answer.locator('.note.repeated');
    await note.waitFor({ timeout: 5_000 });
    expect(await note.textContent()).toContain('Stopped: the answer began repeating itself');
    expect(await answer.locator('.note.truncated').count()).toBe(0);
    const lines = ((await answer.locator('.markdown').textContent()) ?? '').split('helper(x) returns x + 1.').length - 1;
    expect(lines).toBeLessThan(10); // the guard stops a loop at 240 characters and drops the repeats
  });

  it('a thread switched back to shows its explain lines and its Continue and repetition notes again', async () => {
    const wb = workbench();
    const page = chat(wb.page);
    await newChat(page);
    const open = async (title: string, answers: number): Promise<void> => {
      await wb.runCommand('Contenox: Switch Chat Thread', 'Switch Chat Thread');
      const row = wb.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
      await row.waitFor({ timeout: 60_000 });
      await row.click();
      await page.locator('.question', { hasText: title }).first().waitFor({ timeout: 60_000 });
      await expect.poll(async () => page.locator('section.answer.done').count(), { timeout: 60_000 }).toBe(answers);
      const summaries = await page.locator('section.answer.done details.explain-context summary').allTextContents();
      expect(summaries).toHaveLength(answers);
      for (const s of summaries) expect(s).toMatch(/^\d+ chunks? · \d+% cached/);
    };
    await open('What does run return?', 2);
    expect(await page.locator('.markdown ol > li').count()).toBe(3);
    await open('Steps. Reply', 1);
    await page.locator('section.answer.done .note.truncated button.continue').first().waitFor({ timeout: 5_000 });
    await wb.screenshot('workbench-thread-notes.png');
    await open('Loop. Reply', 1);
    await page.locator('section.answer.done .note.repeated').first().waitFor({ timeout: 5_000 });
  });

  it("a rename's code block comes back as per-file diffs beside the chat, applied together", async () => {
    const wb = workbench();
    const page = chat(wb.page);
    await newChat(page); // a thread of its own: the 0.5B copies the block given there
    await wb.page.locator('.tabs-container .tab', { hasText: 'main.py' }).first().click();
    // The block is given: what is tested is what Apply makes of a definition quoted under its new name.
    await ask(wb.page, 'Rename helper to add_one everywhere. Reply with exactly these lines and nothing else:\n' +
      'In util.py:\n```python\ndef add_one(x):\n    """Add one."""\n    return x + 1\n```');
    const answer = page.locator('section.answer.done').first();
    await answer.waitFor({ timeout: 300_000 });
    await answer.locator('.code-block[data-heading*="util.py"] button.apply-code').first().click();
    const dialog = wb.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 60_000 });
    expect(await dialog.textContent()).toContain('Apply the code block to 2 files (util.py, main.py)?');
    // The multi-file diff opened in the editor group beside the chat, not over it.
    const diffGroup = wb.page.locator('.editor-group-container',
      { has: wb.page.locator('.tab.active', { hasText: 'apply the code block' }) });
    await diffGroup.first().waitFor({ timeout: 30_000 });
    expect(await diffGroup.locator('.tab', { hasText: CHAT_TAB }).count()).toBe(0);
    await wb.page.locator('.editor-group-container .tab.active', { hasText: CHAT_TAB }).first().waitFor();
    await wb.screenshot('workbench-apply-rename.png');
    await dialog.locator('a.monaco-button, button', { hasText: 'Apply' }).first().click();
    await dialog.waitFor({ state: 'hidden', timeout: 30_000 });
    const workspace = wb.home.workspace;
    await wb.runCommand('File: Save All Files', 'Save All');
    const read = (name: string) => fs.readFileSync(path.join(workspace, name), 'utf8');
    await expect.poll(() => read('util.py'), { timeout: 30_000 }).toContain('def add_one(x):');
    await expect.poll(() => read('main.py'), { timeout: 30_000 }).toBe(
      'from util import add_one\n\n\ndef run():\n    return add_one(41)\n');
    expect(read('util.py')).not.toContain('helper');
  });
});
