// Opt-in end-to-end test (npm run test:e2e): the packaged .vsix installed into a real VS Code workbench
// (code-server, set up by scripts/setup-code-server.sh) driven by headless Chromium, talking to the
// real `contenox lsp` and the default model.
import { describe, expect, it } from 'vitest';
import { useWorkbench } from './workbench';

const workbench = useWorkbench();

describe('the extension in a real VS Code workbench', () => {
  it('connects to the node: the status bar leaves the starting state', async () => {
    await workbench().statusItem(/no turn yet|cached/).first().waitFor({ timeout: 180_000 });
  });

  it('Contenox: Open Chat answers in the webview with the explain-context table', async () => {
    const wb = workbench();
    await wb.page.locator('.monaco-workbench').click({ position: { x: 640, y: 400 } });
    await wb.openFile('main.py'); // the chat then opens beside the editor
    await wb.runCommand('Contenox: Open Chat', 'Open Chat');

    const chat = wb.page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    await chat.locator('#prompt').waitFor({ timeout: 60_000 });
    await chat.locator('#prompt').fill('What does helper do?');
    await chat.locator('#prompt').press('Enter');
    const answer = chat.locator('section.answer.done');
    await answer.waitFor({ timeout: 300_000 });
    // The explain context is one collapsed line under the answer; it opens on click.
    const explain = answer.locator('details.explain-context');
    expect(await explain.locator('summary').textContent()).toMatch(/^\d+ chunks? · \d+% cached/);
    expect(await explain.getAttribute('open')).toBeNull();
    await explain.locator('summary').click();
    expect(await answer.locator('table.explain tbody tr').count()).toBeGreaterThan(2);
    expect(await answer.locator('table.explain tfoot td').first().textContent()).toMatch(/^\d[\d,]*$/);
    await wb.statusItem(/\d+% cached/).first().waitFor({ timeout: 30_000 });
  });

  it('server code actions on a selection open their result in the chat panel', async () => {
    const page = workbench().page;
    await page.keyboard.press('Control+1'); // the editor group holding main.py
    const editor = page.locator('.editor-instance .monaco-editor').first();
    await editor.locator('.view-line', { hasText: 'return helper(41)' }).waitFor({ timeout: 30_000 });
    await editor.locator('.view-lines').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Control+.');
    // Offered as quick fixes (not under "More Actions…"), titled with the product's name.
    const action = page.locator('.action-widget .monaco-list-row', { hasText: 'Contenox: Find Related Code' });
    await action.first().waitFor({ timeout: 60_000 });
    await action.first().click();
    const chat = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    const related = chat.locator('section.answer.done').nth(1);
    await related.waitFor({ timeout: 120_000 });
    expect(await related.locator('.markdown').textContent()).toContain('util.py');
    expect(await chat.locator('.question').nth(1).textContent()).toContain('Find Related Code');
  });

  it('hover shows the explain-context from the server', async () => {
    // Keyboard only: go to `helper` on line 5 (`    return helper(41)`) and show the hover.
    const wb = workbench();
    await wb.page.keyboard.press('Escape');
    await wb.page.keyboard.press('Control+1');
    await wb.goTo(5, 12);
    await wb.runCommand('Show or Focus Hover');
    const hover = wb.page.locator('.monaco-hover:not(.hidden)').first();
    await hover.waitFor({ timeout: 60_000 });
    await expect.poll(async () => hover.textContent(), { timeout: 30_000 }).toMatch(/cached/i);
    expect(await hover.textContent()).toContain('helper');
  });

  it('clicking the status bar item shows the explain-context table', async () => {
    const wb = workbench();
    await wb.statusItem(/\d+% cached/).first().click();
    const chat = wb.page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    const shown = chat.locator('section.explain-only table.explain');
    await shown.first().waitFor({ timeout: 30_000 });
    expect(await shown.first().locator('tbody tr').count()).toBeGreaterThan(2);
    await wb.screenshot('workbench.png');
  });

  it('the status bar names the model the node serves', async () => {
    await workbench().statusItem(/smollm2-135m/).first().waitFor({ timeout: 30_000 });
  });

  it('Pin File lists the file in the Contenox Pins view, whose inline action unpins it', async () => {
    const wb = workbench();
    await wb.page.keyboard.press('Escape');
    await wb.openFile('util.py');
    await wb.runCommand('Contenox: Pin File', 'Pin File');
    await wb.runCommand('View: Show Explorer', 'Show Explorer');
    const view = wb.page.locator('.pane', { has: wb.page.locator('.pane-header', { hasText: 'Contenox Pins' }) });
    const header = view.locator('.pane-header');
    if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
    const row = view.locator('.monaco-list-row', { hasText: 'util.py' });
    await row.first().waitFor({ timeout: 60_000 });
    await wb.screenshot('workbench-pins.png');
    await row.first().hover();
    await row.first().locator('.action-label').first().click(); // the inline Unpin
    await expect.poll(async () => row.count(), { timeout: 30_000 }).toBe(0);
  });

  it('Switch Chat Thread lists the workspace threads and opens one in the panel', async () => {
    const wb = workbench();
    await wb.runCommand('Contenox: Switch Chat Thread', 'Switch Chat Thread');
    const rows = wb.page.locator('.quick-input-list .monaco-list-row');
    await rows.filter({ hasText: 'What does helper do?' }).first().waitFor({ timeout: 60_000 });
    expect(await rows.filter({ hasText: 'New chat' }).count()).toBe(1);
    await rows.filter({ hasText: 'What does helper do?' }).first().click();
    const chat = wb.page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    await chat.locator('.question', { hasText: 'What does helper do?' }).first().waitFor({ timeout: 60_000 });
    await chat.locator('section.answer.done').first().waitFor({ timeout: 30_000 }); // its recorded answer too
    await wb.screenshot('workbench-thread.png');
  });

});
