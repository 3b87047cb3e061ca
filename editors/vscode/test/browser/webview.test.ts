// The chat webview page in a real headless Chromium (Debian's, driven by playwright-core): the
// same HTML shell, CSP, script and stylesheet VS Code would load, with the host side simulated by
// window.postMessage and a stub acquireVsCodeApi.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Explain, FromWebview, ToWebview } from '../../src/protocol';
import { renderPage } from '../../src/webview/html';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const RESULTS = path.join(ROOT, 'test-results');
const VIEWPORT = { width: 820, height: 640 };
const CHROMIUM_FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run',
];

const EXPLAIN: Explain = {
  workspace: '/abs/root', turn: 2, model: 'smollm2-135m',
  segments: [
    { kind: 'system', tokens: 120, cached: 120, new: 0, invalidated_by: null },
    { kind: 'instructions', tokens: 40, cached: 40, new: 0, invalidated_by: null },
    { kind: 'repo_map', tokens: 640, cached: 640, new: 0, invalidated_by: null },
    { kind: 'diff', tokens: 32, cached: 0, new: 32, invalidated_by: 'src/parser.py' },
    { kind: 'user', tokens: 68, cached: 32, new: 36, invalidated_by: null },
  ],
  totals: { tokens: 900, cached: 832, new: 68, hit_pct: 92.4 },
  predicted_cached_tokens: 832, measured_recomputed_tokens: 68, ttft_ms: 410.2, context_size: 8192,
  notes: [], retrieved: [], citations: null,
};

/** A grounded turn: retrieved code, citations with an invented name, and the planner's notes. */
const GROUNDED: Explain = {
  ...EXPLAIN,
  turn: 3,
  segments: [...EXPLAIN.segments.slice(0, 3), { kind: 'retrieved', tokens: 210, cached: 150, new: 60, invalidated_by: 'new code for this question' },
    ...EXPLAIN.segments.slice(3)],
  totals: { tokens: 1110, cached: 982, new: 128, hit_pct: 88.5 },
  notes: ['retrieved: 1 chunk(s) already in the thread, referenced (not repeated)',
    'tools: not advertised (this model is not certified for tool calls)'],
  retrieved: [
    { id: 'src/parser.py:10-42', name: 'Parser.parse', tokens: 60, status: 'new', reasons: ['defines Parser.parse (mentioned)', 'BM25 rank 1'] },
    { id: 'src/lexer.py:1-30', name: 'tokenize', tokens: 150, status: 'in thread', reasons: ['callee of parse'] },
    { id: '../outside.py:1-2', name: '<b>x</b>', tokens: 1, status: 'new', reasons: ['<img src=x>'] },
  ],
  citations: {
    files_real: ['src/parser.py'], files_unknown: ['src/ast_magic.py'],
    symbols_real: ['Parser.parse'], symbols_unknown: ['Parser.fast_path'], lines_unknown: [],
  },
};

function chromiumPath(): string {
  for (const p of [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (p && fs.existsSync(p)) return p;
  }
  throw new Error('No Chromium: run scripts/ensure-chromium.sh (or set CHROMIUM_PATH)');
}

/** PNG width/height from the IHDR chunk. */
function pngSize(buf: Buffer): { width: number; height: number } {
  expect(buf.subarray(1, 4).toString('ascii')).toBe('PNG');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

let server: http.Server;
let origin = '';
let browser: Browser;
let page: Page;
const requests: string[] = [];
const consoleErrors: string[] = [];

async function post(msg: ToWebview): Promise<void> {
  await page.evaluate((m) => window.postMessage(m, '*'), msg);
}

async function posted(): Promise<FromWebview[]> {
  return page.evaluate(() => (window as unknown as { __posted: FromWebview[] }).__posted);
}

beforeAll(async () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'contenox-webview-'));
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'src/webview/main.ts')], outfile: path.join(out, 'chat.js'),
    bundle: true, platform: 'browser', format: 'iife', target: 'es2022', logLevel: 'silent',
  });
  const files: Record<string, [string, string]> = {
    '/chat.js': [fs.readFileSync(path.join(out, 'chat.js'), 'utf8'), 'text/javascript'],
    '/chat.css': [fs.readFileSync(path.join(ROOT, 'media/chat.css'), 'utf8'), 'text/css'],
  };
  server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/' || url === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(renderPage({ cspSource: origin, nonce: 'T3stN0nce', scriptUri: `${origin}/chat.js`, styleUri: `${origin}/chat.css` }));
      return;
    }
    if (url === '/favicon.ico') {
      res.writeHead(204).end(); // the browser asks for it on its own; a webview has none
      return;
    }
    const file = files[url];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file[1] });
    res.end(file[0]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('no server address');
  origin = `http://127.0.0.1:${addr.port}`;

  browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_FLAGS });
  page = await browser.newPage({ viewport: VIEWPORT });
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.addInitScript(() => {
    const w = window as unknown as { __posted: unknown[]; __violations: string[]; acquireVsCodeApi: () => unknown };
    w.__posted = [];
    w.__violations = [];
    w.acquireVsCodeApi = () => ({ postMessage: (m: unknown) => w.__posted.push(m) });
    document.addEventListener('securitypolicyviolation', (e) => w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    // What VS Code injects into a webview for a dark theme.
    document.addEventListener('DOMContentLoaded', () => {
      const s = document.documentElement.style;
      s.setProperty('--vscode-foreground', '#cccccc');
      s.setProperty('--vscode-editor-background', '#1e1e1e');
      s.setProperty('--vscode-button-background', 'rgb(14, 99, 156)');
      s.setProperty('--vscode-font-family', 'sans-serif');
    });
  });
  await page.goto(`${origin}/index.html`);
  await page.waitForFunction(() => (window as unknown as { __posted: { type: string }[] }).__posted.some((m) => m.type === 'ready'));
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

describe('chat webview in headless Chromium', () => {
  it('loads under its CSP with the stylesheet and theme colours applied', async () => {
    const bg = await page.$eval('#send', (el) => getComputedStyle(el).backgroundColor);
    expect(bg).toBe('rgb(14, 99, 156)');
    await expect.poll(() => page.isDisabled('#stop')).toBe(true);
    // The focused prompt box means keyboard users can type right away.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('prompt');
  });

  it('sends with the keyboard and streams an answer with a code block', async () => {
    await page.keyboard.type('How does the parser work?');
    // Each change of the prompt box goes to the host as the draft (it tells the node, debounced).
    const drafts = (await posted()).filter((m) => m.type === 'draft');
    expect(drafts[0]).toEqual({ type: 'draft', text: 'H' });
    expect(drafts.at(-1)).toEqual({ type: 'draft', text: 'How does the parser work?' });
    await page.keyboard.press('Enter');
    expect((await posted()).at(-1)).toEqual({ type: 'send', prompt: 'How does the parser work?' });
    expect(await page.inputValue('#prompt')).toBe('');

    await post({ type: 'start', chatId: 'c1', prompt: 'How does the parser work?' });
    await expect.poll(() => page.isEnabled('#stop')).toBe(true);
    await post({ type: 'chunk', chatId: 'c1', text: 'The parser reads **tokens** and ' });
    await post({ type: 'chunk', chatId: 'c1', text: 'builds a tree:\n```python\ndef parse(src):\n    return a < b' });
    const answer = page.locator('section.answer[data-chat-id="c1"]');
    await expect.poll(() => answer.locator('pre.streaming code').textContent()).toBe('def parse(src):\n    return a < b');
    expect(await answer.locator('strong').textContent()).toBe('tokens');
    expect(await answer.getAttribute('aria-busy')).toBe('true');

    await post({ type: 'chunk', chatId: 'c1', text: '\n```\nThat is all.' });
    await post({ type: 'done', chatId: 'c1', text: '', explain: EXPLAIN });
    await expect.poll(() => answer.getAttribute('class')).toContain('done');
    expect(await answer.locator('.code-block[data-lang="python"] pre:not(.streaming)').count()).toBe(1);
    expect(await answer.locator('.markdown p').last().textContent()).toBe('That is all.');
    await expect.poll(() => page.isDisabled('#stop')).toBe(true);
  });

  it('a finished code block is highlighted and its Copy / Insert / Apply send the block\'s text to the host', async () => {
    const answer = page.locator('section.answer[data-chat-id="c1"]');
    const block = answer.locator('.code-block[data-lang="python"]');
    expect(await block.locator('span.tok-keyword').allTextContents()).toEqual(['def', 'return']);
    const before = (await posted()).length;
    await block.locator('button.copy-code').click();
    await block.locator('button.insert-code').click();
    await block.locator('button.apply-code').click();
    expect((await posted()).slice(before)).toEqual([
      { type: 'copyCode', text: 'def parse(src):\n    return a < b' },
      { type: 'insertCode', text: 'def parse(src):\n    return a < b' },
      // Apply carries the line before the block (it may name the file), the question and the language.
      { type: 'applyCode', text: 'def parse(src):\n    return a < b', heading: 'The parser reads **tokens** and builds a tree:',
        question: 'How does the parser work?', lang: 'python' },
    ]);
    const keyword = await block.locator('span.tok-keyword').first().evaluate((el) => getComputedStyle(el).color);
    const plain = await block.locator('pre code').evaluate((el) => getComputedStyle(el).color);
    expect(keyword).not.toBe(plain); // the theme colours apply
    fs.mkdirSync(RESULTS, { recursive: true });
    await answer.screenshot({ path: path.join(RESULTS, 'chat-code-block.png') });
    expect(fs.statSync(path.join(RESULTS, 'chat-code-block.png')).size).toBeGreaterThan(2_000);
  });

  it('shows the explain-context table under the answer', async () => {
    const table = page.locator('section.answer[data-chat-id="c1"] table.explain');
    expect(await table.locator('tbody tr').count()).toBe(EXPLAIN.segments.length);
    const diff = await table.locator('tr[data-kind="diff"] td').allTextContents();
    expect(diff).toEqual(['32', '0', '32', 'src/parser.py']);
    expect(await table.locator('tfoot td').allTextContents()).toEqual(['900', '832', '68', '92%']);
    expect(await table.locator('caption').textContent()).toBe('turn 2 · smollm2-135m · 92% cached · ttft 0.4 s');
  });

  it('the stop button (and Escape) asks the host to cancel the running chat', async () => {
    await post({ type: 'start', chatId: 'c2', prompt: 'Write a long essay' });
    await post({ type: 'chunk', chatId: 'c2', text: 'Once upon' });
    await page.click('#stop');
    expect(await posted()).toContainEqual({ type: 'stop', chatId: 'c2' });
    await page.focus('#prompt');
    await page.keyboard.press('Escape');
    expect((await posted()).filter((m) => m.type === 'stop')).toHaveLength(2);
    await post({ type: 'cancelled', chatId: 'c2' });
    await post({ type: 'chunk', chatId: 'c2', text: ' a time (late chunk)' });
    const answer = page.locator('section.answer[data-chat-id="c2"]');
    await expect.poll(() => answer.getAttribute('class')).toContain('cancelled');
    expect(await answer.locator('.note.cancelled').textContent()).toBe('Stopped.');
    expect(await answer.locator('.markdown').textContent()).toBe('Once upon');
    await expect.poll(() => page.isDisabled('#stop')).toBe(true);
  });

  it('renders hostile model output inert', async () => {
    await post({ type: 'start', chatId: 'c3', prompt: '<b>hi</b>' });
    await post({
      type: 'done', chatId: 'c3', explain: null,
      text: '<img src="https://evil.example/x.png" onerror="window.__pwned=1"><script>window.__pwned=2</script>' +
        '\n[x](javascript:window.__pwned=3) ![y](https://evil.example/y.png)',
    });
    const answer = page.locator('section.answer[data-chat-id="c3"]');
    await expect.poll(() => answer.getAttribute('class')).toContain('done');
    expect(await answer.locator('img, script, a, iframe').count()).toBe(0);
    expect(await page.locator('.question b').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await answer.locator('.explain-context').count()).toBe(0); // no model turn, no table
  });

  it('shows retrieved code, citations and notes; locations open the file at the line', async () => {
    await post({ type: 'start', chatId: 'c4', prompt: 'Where is parsing done?' });
    await post({ type: 'done', chatId: 'c4', explain: GROUNDED,
      text: 'In `src/parser.py:12` (see also src/lexer.py:3-9); not ../etc/passwd:1.' });
    const answer = page.locator('section.answer[data-chat-id="c4"]');
    await expect.poll(() => answer.getAttribute('class')).toContain('done');

    // The explain context is one collapsed line; a click opens it.
    const details = answer.locator('details.explain-context');
    expect(await details.getAttribute('open')).toBeNull();
    expect(await details.locator('summary').textContent()).toBe('3 chunks · 89% cached · cited 2 real, 2 unknown');
    await details.locator('summary').click();
    await expect.poll(() => details.getAttribute('open')).toBe('');
    const chunks = answer.locator('ol.retrieved > li');
    expect(await chunks.count()).toBe(3);
    expect(await chunks.nth(0).textContent()).toBe('src/parser.py:10-42 Parser.parse 60 tok new defines Parser.parse (mentioned); BM25 rank 1');
    expect(await chunks.nth(1).locator('.chunk-tokens').textContent()).toBe('cached');
    expect(await chunks.nth(1).locator('.chunk-status').textContent()).toBe('in thread');
    expect(await chunks.nth(2).locator('button.loc').count()).toBe(0); // `..` is never a link
    expect(await chunks.nth(2).locator('b, img').count()).toBe(0);

    expect(await answer.locator('.cited-summary').textContent()).toBe('cited: 2 real, 2 unknown');
    const unknown = answer.locator('.cited-unknown');
    expect(await unknown.textContent()).toBe('\u26a0 not in the workspace: src/ast_magic.py, Parser.fast_path');
    // Flagged in the theme's warning colour, not the normal text colour.
    expect(await unknown.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(204, 167, 0)');
    expect(await answer.locator('ul.notes li').allTextContents()).toEqual(GROUNDED.notes);

    const before = (await posted()).length;
    await chunks.nth(0).locator('button.loc').click();
    await answer.locator('.cited-real button.loc').click();
    await answer.locator('.markdown button.loc', { hasText: 'src/lexer.py:3-9' }).click();
    await answer.locator('.markdown code button.loc').press('Enter'); // keyboard works too
    expect((await posted()).slice(before)).toEqual([
      { type: 'open', path: 'src/parser.py', line: 10 },
      { type: 'open', path: 'src/parser.py' },
      { type: 'open', path: 'src/lexer.py', line: 3 },
      { type: 'open', path: 'src/parser.py', line: 12 },
    ]);
    expect(await answer.locator('.markdown button.loc').count()).toBe(2);
    expect(await answer.locator('.markdown').textContent()).toContain('not ../etc/passwd:1.');
  });

  it('shows each tool step of an agent turn collapsed, updated in place when it ends', async () => {
    await post({ type: 'start', chatId: 'c-agent', prompt: 'Fix helper' });
    await post({ type: 'tool', chatId: 'c-agent', tool: { id: 'step1-0', kind: 'other', title: "read_file(path='util.py')",
      status: 'in_progress', output: '' } });
    const answer = page.locator('section.answer[data-chat-id="c-agent"]');
    const step = answer.locator('.tool-steps details.tool-step');
    await expect.poll(() => step.count()).toBe(1);
    expect(await step.locator('summary').textContent()).toBe("… read_file(path='util.py')");
    await post({ type: 'tool', chatId: 'c-agent', tool: { id: 'step1-0', kind: 'read', title: 'Read util.py',
      status: 'completed', output: 'util.py, 2 lines:\n    1  <b>def</b> helper(x):' } });
    await post({ type: 'tool', chatId: 'c-agent', tool: { id: 'step1-1', kind: 'read', title: 'Read ../secret',
      status: 'failed', output: 'error: ../secret is outside the workspace' } });
    await post({ type: 'chunk', chatId: 'c-agent', text: 'helper subtracts one.' });
    await expect.poll(() => step.count()).toBe(2);
    expect(await step.nth(0).locator('summary').textContent()).toBe('✓ Read util.py');
    expect(await step.nth(0).getAttribute('open')).toBeNull(); // collapsed by default
    expect(await step.nth(0).locator('pre.tool-output').textContent()).toContain('<b>def</b> helper'); // inert
    expect(await step.nth(1).locator('summary.tool-failed').textContent()).toBe('✗ Read ../secret');
    expect(await answer.locator('.markdown').textContent()).toBe('helper subtracts one.'); // after the steps
    await step.nth(0).locator('summary').click();
    expect(await step.nth(0).locator('pre.tool-output').isVisible()).toBe(true);
    await post({ type: 'done', chatId: 'c-agent', text: 'helper subtracts one.', explain: null });
    await expect.poll(() => answer.getAttribute('class')).toContain('done');
    fs.mkdirSync(RESULTS, { recursive: true });
    await answer.screenshot({ path: path.join(RESULTS, 'chat-tool-steps.png') });
  });

  it('shows proposed edits as diffs; Apply and Reject ask the host once and show its answer', async () => {
    const diff = '--- a/src/parser.py\n+++ b/src/parser.py\n@@ -1,2 +1,2 @@\n def parse():\n-    return <b>1</b>\n+    return 2\n';
    await post({ type: 'start', chatId: 'c5', prompt: 'Fix parse' });
    await post({ type: 'done', chatId: 'c5', explain: null, text: 'Fixed in `src/parser.py`.',
      edits: [{ path: 'src/parser.py', diff, isNew: false }, { path: 'docs/NEW.md', diff: '+++ b/docs/NEW.md\n+# New\n', isNew: true }],
      problems: ['edit block 3: its search lines are not in src/lexer.py'] });
    const answer = page.locator('section.answer[data-chat-id="c5"]');
    await expect.poll(() => answer.getAttribute('class')).toContain('done');
    const edits = answer.locator('.edit');
    expect(await edits.count()).toBe(2);
    expect(await edits.nth(0).locator('button.loc').textContent()).toBe('Edit src/parser.py');
    expect(await edits.nth(1).locator('button.loc').textContent()).toBe('Create docs/NEW.md');
    expect(await edits.nth(0).locator('.diff-del').textContent()).toBe('-    return <b>1</b>'); // escaped, inert
    expect(await edits.nth(0).locator('.diff-add').textContent()).toBe('+    return 2');
    expect(await answer.locator('.edit-problem').textContent())
      .toBe('Edit not applied: edit block 3: its search lines are not in src/lexer.py');

    const before = (await posted()).length;
    await edits.nth(0).locator('button.apply-edit').click();
    await edits.nth(0).locator('button.apply-edit').click({ force: true }); // disabled now: no second request
    await edits.nth(1).locator('button.reject-edit').click();
    expect((await posted()).slice(before)).toEqual([
      { type: 'applyEdit', chatId: 'c5', index: 0 },
      { type: 'rejectEdit', chatId: 'c5', index: 1 },
    ]);
    await post({ type: 'editResult', chatId: 'c5', index: 0, status: 'failed', message: 'src/parser.py changed since the edit was proposed; ask again' });
    await post({ type: 'editResult', chatId: 'c5', index: 1, status: 'rejected' });
    // window.postMessage is delivered asynchronously: wait for the page to apply it
    await expect.poll(() => edits.nth(0).locator('.edit-status').textContent())
      .toBe('Not applied: src/parser.py changed since the edit was proposed; ask again');
    expect(await edits.nth(0).getAttribute('class')).toContain('failed');
    await expect.poll(() => edits.nth(1).locator('.edit-status').textContent()).toBe('Rejected.');
  });

  it('a cut answer offers Continue, which asks the thread to go on', async () => {
    await post({ type: 'start', chatId: 'c6', prompt: 'Explain everything' });
    await post({ type: 'done', chatId: 'c6', explain: null, text: 'First part', truncated: true });
    const answer = page.locator('section.answer[data-chat-id="c6"]');
    await expect.poll(() => answer.getAttribute('class')).toContain('done');
    expect(await answer.locator('.note.truncated').textContent()).toBe('The answer was cut at the length limit. Continue');
    const before = (await posted()).length;
    await answer.locator('button.continue').click();
    expect((await posted()).slice(before)).toEqual([{ type: 'send', prompt: 'Continue.' }]);
    expect(await answer.locator('button.continue').isDisabled()).toBe(true);
  });

  it('New chat asks the host for a new thread and the page clears on its answer', async () => {
    const before = (await posted()).length;
    await page.locator('#new-chat').click();
    expect((await posted()).slice(before)).toEqual([{ type: 'newChat' }]);
    expect(await page.locator('section.answer').count()).toBeGreaterThan(0);
    await post({ type: 'cleared' });
    await expect.poll(() => page.locator('#log > *').count()).toBe(0);
    await post({ type: 'start', chatId: 'c4', prompt: 'Where is parsing done?' }); // for the screenshot below
    await post({ type: 'done', chatId: 'c4', explain: GROUNDED, text: 'In `src/parser.py:12`.' });
    await expect.poll(() => page.locator('section.answer[data-chat-id="c4"]').getAttribute('class')).toContain('done');
  });

  it('loaded nothing remote, broke no CSP rule, logged no errors; screenshot is written', async () => {
    await post({ type: 'explain', explain: EXPLAIN });
    for (const url of requests) expect(url.startsWith(origin)).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)).toEqual([]);
    expect(consoleErrors).toEqual([]);

    fs.mkdirSync(RESULTS, { recursive: true });
    const shot = path.join(RESULTS, 'chat-webview.png');
    fs.rmSync(shot, { force: true });
    await page.locator('section.answer[data-chat-id="c4"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: shot });
    const buf = fs.readFileSync(shot);
    expect(buf.length).toBeGreaterThan(5_000);
    expect(pngSize(buf)).toEqual(VIEWPORT);
  });
});
