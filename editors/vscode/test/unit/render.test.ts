import { describe, expect, it } from 'vitest';
import type { Verification } from '../../src/protocol';
import {
  escapeHtml, explainSummary, renderEdits, renderExplainTable, renderMarkdown, renderToolStep, renderVerification,
  stopNote,
} from '../../src/webview/render';
import { contentSecurityPolicy, makeNonce, renderPage } from '../../src/webview/html';
import { EXPLAIN } from './fixtures';

describe('renderMarkdown sanitises', () => {
  it('escapes raw HTML, scripts and event handlers', () => {
    const html = renderMarkdown('hi <script>alert(1)</script> <img src=x onerror="alert(2)"> & done');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(2)&quot;&gt;');
    expect(html).toContain('&amp; done');
  });
  it('never produces links or remote resources', () => {
    const html = renderMarkdown('[click](javascript:alert(1)) and ![img](https://evil.example/x.png) and [doc](https://example.com)');
    expect(html).not.toMatch(/<a\b/);
    expect(html).not.toMatch(/\bhref=/);
    expect(html).not.toMatch(/\bsrc=/);
    expect(html).toContain('<span class="link">click</span>');
  });
  it('keeps code blocks verbatim and escaped, with the language label', () => {
    const html = renderMarkdown('Look:\n```python\nif a < b and c > d:\n    print("<b>")\n```\nafter');
    expect(html).toContain('<div class="code-block" data-lang="python" data-heading="Look:">');
    const plain = html.replace(/<span class="tok-[a-z]+">|<\/span>/g, ''); // the highlighter's marks only
    expect(plain).toContain('if a &lt; b and c &gt; d:\n    print(&quot;&lt;b&gt;&quot;)');
    expect(html).toContain('<p>after</p>');
  });
  it('renders an unclosed fence while streaming', () => {
    const html = renderMarkdown('```ts\nconst x = 1;');
    expect(html).toContain('<pre class="streaming"><code><span class="tok-keyword">const</span> x = ' +
      '<span class="tok-number">1</span>;</code></pre>');
  });
  it('does not interpret markdown inside code spans or blocks', () => {
    expect(renderMarkdown('use `**not bold**` here')).toContain('<code>**not bold**</code>');
    expect(renderMarkdown('```\n**x**\n```')).toContain('<code>**x**</code>');
  });
  it('handles headings, lists, emphasis', () => {
    const html = renderMarkdown('# Title\n- **one**\n- *two*\n\n1. first\n2. second');
    expect(html).toContain('<h3>Title</h3>');
    expect(html).toContain('<ul><li><strong>one</strong></li><li><em>two</em></li></ul>');
    expect(html).toContain('<ol><li>first</li><li>second</li></ol>');
  });
  it('leaves snake_case identifiers alone', () => {
    expect(renderMarkdown('call my__dunder__name or snake_case_name')).not.toContain('<strong>');
    expect(renderMarkdown('this is __important__.')).toContain('<strong>important</strong>');
  });
  it('escapes quotes for attribute safety', () => {
    expect(escapeHtml(`"'<>&`)).toBe('&quot;&#39;&lt;&gt;&amp;');
  });
});

describe('renderExplainTable', () => {
  it('lists every segment with tokens, cached and new, and the totals', () => {
    const html = renderExplainTable(EXPLAIN);
    for (const s of EXPLAIN.segments) expect(html).toContain(`<tr data-kind="${s.kind}"><th scope="row">${s.kind}</th>`);
    expect(html).toContain('<td>700</td><td>700</td><td>0</td>');
    expect(html).toContain('<td>src/a.py</td>');
    expect(html).toContain('<th scope="row">total</th><td>1,140</td><td>1,012</td><td>128</td><td>89%</td>');
    expect(html).toContain('<caption>turn 3 · smollm2-135m · 89% cached · ttft 0.4 s</caption>');
  });
  it('escapes segment names', () => {
    const html = renderExplainTable({ ...EXPLAIN, segments: [{ kind: '<b>x', tokens: 1, cached: 0, new: 1, invalidated_by: '"y"' }] });
    expect(html).not.toContain('<b>x');
    expect(html).toContain('&lt;b&gt;x');
  });
  it('explains the empty state', () => {
    expect(renderExplainTable(null)).toContain('No turn yet');
  });
});

describe('renderExplainTable: retrieved code, citations, notes', () => {
  const html = renderExplainTable(EXPLAIN);

  it('lists each retrieved chunk best first: location button, name, tokens or cached, status, reasons', () => {
    const items = html.match(/<li class="chunk"[\s\S]*?<\/li>/g) ?? [];
    expect(items).toHaveLength(2);
    expect(items[0]).toBe('<li class="chunk" data-status="new">' +
      '<button type="button" class="loc" data-path="pkg/signer.py" data-line="40" title="Open pkg/signer.py at line 40">' +
      'pkg/signer.py:40-72</button> <span class="chunk-name">Signer.unsign</span> <span class="chunk-tokens">60 tok</span> ' +
      '<span class="chunk-status">new</span> <span class="reasons"><span class="reason">defines Signer.unsign (mentioned)</span>; ' +
      '<span class="reason">BM25 rank 2</span></span></li>');
    expect(items[1]).toContain('data-status="in thread"');
    expect(items[1]).toContain('data-path="pkg/keys.py" data-line="3"');
    expect(items[1]).toContain('<span class="chunk-tokens">cached</span> <span class="chunk-status">in thread</span>');
    expect(items[1]).not.toContain('180');
    expect(html.indexOf('</table>')).toBeLessThan(html.indexOf('retrieved code'));
  });

  it('summarises citations like the CLI and flags the unknown names', () => {
    expect(html).toContain('<span class="cited-summary">cited: 2 real, 3 unknown</span>');
    expect(html).toContain('<div class="cited-real"><button type="button" class="loc" data-path="pkg/signer.py" ' +
      'title="Open pkg/signer.py">pkg/signer.py</button> <code>Signer.unsign</code></div>');
    const unknown = /<div class="cited-unknown" role="note">([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '';
    expect(unknown).toContain('not in the workspace');
    for (const name of ['pkg/crypto.py', 'Signer.verify_fast', 'pkg/keys.py:400']) {
      expect(unknown).toContain(`<span class="unknown" title="not in the workspace">${name}</span>`);
    }
    expect(unknown).not.toContain('class="loc"'); // invented names are not links
    expect(html).toContain('class="citations has-unknown" data-real="2" data-unknown="3"');
  });

  it('shows a clean citation line and nothing flagged when everything is real', () => {
    const clean = renderExplainTable({ ...EXPLAIN, citations: { files_real: ['a.py'], files_unknown: [], symbols_real: [], symbols_unknown: [], lines_unknown: [] } });
    expect(clean).toContain('cited: 1 real, 0 unknown');
    expect(clean).not.toContain('cited-unknown');
    expect(clean).toContain('<div class="citations" ');
  });

  it('lists the notes', () => {
    expect(html).toContain('<ul class="notes"><li>thread rebased: turns 1-3 summarised (2 kept in full)</li>' +
      '<li>retrieved: 1 chunk(s) already in the thread, referenced (not repeated)</li></ul>');
  });

  it('leaves out empty sections (no retrieval, no answer yet, no notes)', () => {
    const bare = renderExplainTable({ ...EXPLAIN, retrieved: [], citations: null, notes: [] });
    expect(bare).not.toContain('retrieved code');
    expect(bare).not.toContain('cited:');
    expect(bare).not.toContain('class="notes"');
  });

  it('escapes every new field and links only safe workspace-relative paths', () => {
    const evil = renderExplainTable({
      ...EXPLAIN,
      notes: ['<img src=x onerror=alert(1)>'],
      retrieved: [
        { id: '../../etc/passwd:1-2', name: '<b>n</b>', tokens: 1, status: 'new', reasons: ['"><script>x</script>'] },
        { id: '/abs/a.py:1-2', name: 'abs', tokens: 1, status: 'new', reasons: [] },
        { id: 'a"onclick="x.py:1-2', name: 'q', tokens: 1, status: 'new', reasons: [] },
      ],
      citations: { files_real: ['../up.py', 'ok/<i>.py'], files_unknown: ['<svg onload=x>'], symbols_real: ['a<b'], symbols_unknown: ["'x'"], lines_unknown: [] },
    });
    expect(evil).not.toMatch(/<(img|script|b|i|svg)\b/);
    expect(evil).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(evil).toContain('<code>../../etc/passwd:1-2</code>');
    expect(evil).toContain('<code>/abs/a.py:1-2</code>');
    expect(evil).toContain('<code>../up.py</code>');
    expect(evil).toContain('&#39;x&#39;');
    const paths = [...evil.matchAll(/data-path="([^"]*)"/g)].map((m) => m[1]);
    expect(paths).toEqual(['a&quot;onclick=&quot;x.py', 'ok/&lt;i&gt;.py']);
    expect(evil).not.toMatch(/\sonclick=/);
  });
});

describe('renderMarkdown links workspace locations', () => {
  const paths = (html: string): string[] => [...html.matchAll(/<button type="button" class="loc" data-path="([^"]*)"(?: data-line="(\d+)")?/g)]
    .map((m) => (m[2] ? `${m[1]}@${m[2]}` : m[1] ?? ''));

  it('turns path:line and path:start-end in text, lists and code spans into open buttons', () => {
    const html = renderMarkdown('See pkg/signer.py:120 and `pkg/keys.py:3-18`.\n- `src/a.py:4` parse\n- in b.ts:7\u20139 too');
    expect(paths(html)).toEqual(['pkg/signer.py@120', 'pkg/keys.py@3', 'src/a.py@4', 'b.ts@7']);
    expect(html).toContain('<code><button type="button" class="loc" data-path="pkg/keys.py" data-line="3" title="Open pkg/keys.py at line 3">pkg/keys.py:3-18</button></code>');
  });

  it('keeps dunder paths intact (no emphasis inside a location)', () => {
    const html = renderMarkdown('look at pkg/__init__.py:3 now');
    expect(paths(html)).toEqual(['pkg/__init__.py@3']);
    expect(html).not.toContain('<strong>');
  });

  it('does not link unsafe, absolute, URL or non-file references', () => {
    const html = renderMarkdown('../secret.py:1 and /etc/hosts.txt:2 and https://example.com/a.py:3 and a/../b.py:4 ' +
      'at 10:30 and localhost:8080 and C:\\x.py:5');
    expect(paths(html)).toEqual([]);
  });

  it('leaves fenced code verbatim', () => {
    const html = renderMarkdown('```\nsrc/a.py:4\n```');
    expect(paths(html)).toEqual([]);
    expect(html).toContain('<code>src/a.py:4</code>');
  });

  it('still escapes everything around a location', () => {
    const html = renderMarkdown('<script>x</script> a.py:3 "quoted" b.py:4<img>');
    expect(html).not.toMatch(/<(script|img)\b/);
    expect(paths(html)).toEqual(['a.py@3', 'b.py@4']);
  });

  it('ignores NUL bytes that would collide with the renderer\'s placeholders', () => {
    const html = renderMarkdown('x \u00000\u0000 `a.py:1`');
    expect(html).not.toContain('\u0000');
    expect(paths(html)).toEqual(['a.py@1']);
  });
});

describe('page shell', () => {
  it('has a strict CSP with the nonce and no remote sources', () => {
    const csp = contentSecurityPolicy('vscode-webview://abc', 'N0NCE');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'nonce-N0NCE'");
    expect(csp).not.toMatch(/https?:/);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
  });
  it('puts the nonce on the only script tag', () => {
    const html = renderPage({ cspSource: 'vscode-webview://abc', scriptUri: 'vscode-webview://abc/chat.js', styleUri: 'vscode-webview://abc/chat.css', nonce: 'N0NCE' });
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    expect(scripts).toEqual(['<script nonce="N0NCE" src="vscode-webview://abc/chat.js">']);
    expect(html).toContain('http-equiv="Content-Security-Policy"');
  });
  it('has an empty-state hint above the conversation (the page hides it once there is a turn)', () => {
    const html = renderPage({ cspSource: 'c', scriptUri: 's', styleUri: 't', nonce: 'N' });
    const hint = /<div id="empty" class="empty-state">([\s\S]*?)<\/div>\s*<main id="log"/.exec(html);
    expect(hint?.[1]).toContain('Ask about this workspace.');
    expect(hint?.[1]).toContain('Contenox: Explain Selection');
    expect(hint?.[1]).toContain('Contenox: Switch Chat Thread…');
  });
  it('makes 32-character alphanumeric nonces that differ', () => {
    const a = makeNonce();
    expect(a).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(makeNonce()).not.toBe(a);
  });
});

describe('the verdict of a verified fix, next to its diffs', () => {
  const EDIT = { path: 'util.py', diff: '--- a/util.py\n+++ b/util.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n', isNew: false };
  const PASSED: Verification = {
    status: 'passed', command: 'python -m pytest -q -x tests/test_util.py', candidates: 4, passed: 2, chosen: 3,
    summary: 'verified: `python -m pytest -q -x tests/test_util.py` passed (2 of 4 candidates); 0 repair round(s); ' +
      'decode 3.0 s, apply 0.1 s, check 2.2 s',
  };
  const FAILED: Verification = {
    status: 'failed', command: 'npm test', candidates: 12, passed: 0, chosen: 1,
    summary: 'not verified: `npm test` failed for all 12 candidates; 2 repair round(s); decode 9.0 s, apply 0.3 s, ' +
      'check 40.1 s',
  };
  const SKIPPED: Verification = {
    status: 'skipped', command: '', candidates: 0, passed: 0, chosen: null,
    summary: 'not verified: you declined running `pytest` in this workspace (`contenox verify off` asks again)',
  };
  const text = (html: string): string => html.replace(/<[^>]+>/g, '').replace(/&#39;/g, "'").replace(/&quot;/g, '"');

  it('says verified with a check mark: the command and how many candidates passed', () => {
    const html = renderVerification(PASSED);
    expect(html).toContain('class="verification verify-passed" data-status="passed"');
    expect(html).toContain('<span class="verify-mark" aria-hidden="true">\u2713</span>');
    expect(html).toContain('verified: <code>python -m pytest -q -x tests/test_util.py</code> passed (2 of 4 candidates)');
    expect(html).toContain(`title="${escapeHtml(PASSED.summary)}"`); // repair rounds and time in the tooltip
    expect(renderVerification({ ...PASSED, candidates: 1, passed: 1 })).toContain('passed (1 of 1 candidate)');
  });

  it('says not verified and why, from the summary', () => {
    const failed = renderVerification(FAILED);
    expect(failed).toContain('verify-failed');
    expect(failed).toContain('\u2717');
    expect(text(failed)).toContain('not verified: npm test failed for all 12 candidates; 2 repair round(s)');
    expect(failed).toContain('<code>npm test</code>');
    const skipped = renderVerification(SKIPPED);
    expect(skipped).toContain('verify-skipped');
    expect(text(skipped)).toContain("not verified: you declined running pytest in this workspace (contenox verify off asks again)");
    expect(skipped).not.toContain('verify-passed');
    // a summary without the prefix gets it; an empty one says what it can
    expect(text(renderVerification({ ...SKIPPED, summary: 'no check command' }))).toContain('not verified: no check command');
    expect(text(renderVerification({ ...FAILED, summary: '' }))).toContain('not verified: npm test failed for all 12 candidates');
  });

  it('says checked, not verified, when the check passed before the change too; a written test in its words', () => {
    const checked = renderVerification({ ...PASSED, summary: 'checked: `pytest -q` still passes with the change (it ' +
      'passed before it too: nothing broke, but the check cannot tell whether the change does what was asked); ' +
      '2 repair round(s); decode 9.0 s, apply 0.0 s, check 1.2 s' });
    expect(checked).toContain('class="verification verify-checked" data-status="passed"');
    expect(checked).not.toContain('\u2713');
    expect(text(checked)).toContain('checked: pytest -q still passes with the change (it passed before it too');
    expect(text(checked)).not.toContain('verified');
    const written = renderVerification({ ...PASSED, summary: 'verified by a test the model wrote for the change, not ' +
      "the project's: `node contenox-change.test.js` passed (1 of 4 candidates) (npm test cannot run); 0 repair round(s)" });
    expect(written).toContain('verify-passed');
    expect(text(written)).toContain("verified by a test the model wrote for the change, not the project's");
  });

  it('escapes the command and the summary', () => {
    const html = renderVerification({ ...PASSED, command: 'pytest <img src=x onerror=alert(1)>',
      summary: '"><script>alert(2)</script>' });
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const failed = renderVerification({ ...FAILED, summary: 'not verified: <b>x</b>' });
    expect(failed).not.toContain('<b>');
  });

  it('stands above the diffs with their Apply / Reject, and alone when there is no edit', () => {
    const html = renderEdits([EDIT], [], PASSED);
    expect(html.startsWith('<div class="edits"><div class="verification verify-passed"')).toBe(true);
    expect(html.indexOf('verification')).toBeLessThan(html.indexOf('class="apply-edit"'));
    expect(html).toContain('<button class="reject-edit" data-index="0">Reject</button>');
    expect(renderEdits([EDIT], [])).not.toContain('verification');
    expect(renderEdits([EDIT], [], null)).not.toContain('verification');
    expect(renderEdits([], [], SKIPPED)).toContain('verify-skipped');
    expect(renderEdits([], [], null)).toBe('');
  });

  it('renders a check run as a collapsed execute step', () => {
    const html = renderToolStep({ id: 'verify-2', kind: 'execute', status: 'failed',
      title: 'check candidate 2 (util.py): python -m pytest -q', output: 'exit code 1\n1 failed <in 0.3s>' });
    expect(html).toContain('<summary class="tool-failed" data-kind="execute">');
    expect(html).toContain('check candidate 2 (util.py): python -m pytest -q</summary>');
    expect(html).toContain('<pre class="tool-output">exit code 1\n1 failed &lt;in 0.3s&gt;</pre>');
  });
});

describe('numbered lists', () => {
  it('keeps one list across blank lines between items (not "1. 1. 1.")', () => {
    const html = renderMarkdown('Steps:\n\n1. one\n\n2. two\n\n3. three\n\nDone.');
    expect(html.match(/<ol/g)).toHaveLength(1);
    expect(html).toContain('<ol><li>one</li><li>two</li><li>three</li></ol>');
  });
  it('goes on with its own numbers after a code block between items, and keeps indented continuations', () => {
    const html = renderMarkdown('1. first\n   more of it\n```py\nx = 1\n```\n2. second\n3. third');
    expect(html).toContain('<ol><li>first<br>more of it</li></ol>');
    expect(html).toContain('<ol start="2"><li>second</li><li>third</li></ol>');
  });
  it('a bullet list after a blank line is another list', () => {
    const html = renderMarkdown('1. a\n\n- b');
    expect(html).toContain('<ol><li>a</li></ol>');
    expect(html).toContain('<ul><li>b</li></ul>');
  });
});

describe('citations in the answer', () => {
  const cites = { files_real: ['pkg/signer.py'], files_unknown: ['magic.py'], symbols_real: ['Signer'],
    symbols_unknown: ['Signer.fast_path'], lines_unknown: ['pkg/signer.py:900'] };
  it('links real paths (also bare, as the check resolved them) and marks invented ones inline', () => {
    const html = renderMarkdown('See `signer.py` and signer.py:12, not magic.py:3 nor signer.py:900; `Signer.fast_path()` is made up.', cites);
    expect(html).toContain('<code><button type="button" class="loc" data-path="pkg/signer.py"');
    expect(html).toContain('data-path="pkg/signer.py" data-line="12"');
    expect(html).toContain('<span class="unknown-ref" title="magic.py is not in the workspace">magic.py:3');
    expect(html).toContain('<span class="unknown-ref" title="pkg/signer.py has no line 900">signer.py:900');
    expect(html).toContain('<span class="unknown-ref" title="Signer.fast_path() is not in the workspace"><code>Signer.fast_path()</code>');
    expect(html).not.toContain('\u0000');
  });
  it('without citations (streaming) only path:line references link, as before', () => {
    const html = renderMarkdown('See signer.py and magic.py:3.');
    expect(html).toContain('data-path="magic.py" data-line="3"');
    expect(html).not.toContain('data-path="signer.py"');
    expect(html).not.toContain('unknown-ref');
  });
});

describe('a code block carries the line before it', () => {
  it('as data-heading (escaped), not when a fence or nothing comes before it', () => {
    expect(renderMarkdown('In `pkg/timed.py` "x":\n\n```python\nx = 1\n```')).toContain(
      'data-heading="In `pkg/timed.py` &quot;x&quot;:"');
    expect(renderMarkdown('```python\nx = 1\n```')).not.toContain('data-heading');
    expect(renderMarkdown('```\na\n```\n```\nb\n```').match(/data-heading/g)).toBeNull();
  });
});

describe('explain summary and stop notes', () => {
  it('says the explain context in one line', () => {
    const cites = { files_real: ['a.py', 'b.py'], files_unknown: ['c.py'], symbols_real: [], symbols_unknown: [], lines_unknown: [] };
    const explain = { ...EXPLAIN, citations: cites, totals: { ...EXPLAIN.totals, hit_pct: 60 } };
    const retrieved = explain.retrieved.length;
    expect(explainSummary(explain).replace(/<[^>]+>/g, '')).toBe(
      `${retrieved} chunk${retrieved === 1 ? '' : 's'} · 60% cached · cited 2 real, 1 unknown`);
    expect(explainSummary(explain)).toContain('<span class="unknown-count">1 unknown</span>');
    expect(explainSummary({ ...explain, citations: null }).replace(/<[^>]+>/g, '')).toBe(`${retrieved} chunk${retrieved === 1 ? '' : 's'} · 60% cached`);
  });
  it('says how much of the code was anticipated and cached, in the line and in the table', () => {
    const anticipated = { place: 'src/a.py:12', state: 'warm', retrieved_tokens: 2940, anticipated_tokens: 2610,
      cached_tokens: 2600, new_tokens: 340, used: 4, kept: 1, dropped: 2 };
    const explain = { ...EXPLAIN, citations: null, totals: { ...EXPLAIN.totals, hit_pct: 60 }, anticipated };
    const retrieved = explain.retrieved.length;
    expect(explainSummary(explain).replace(/<[^>]+>/g, '')).toBe(
      `${retrieved} chunk${retrieved === 1 ? '' : 's'} · 60% cached · 2,600 of 2,940 code tokens anticipated`);
    expect(renderExplainTable(explain)).toContain(
      'retrieved: 2,940 tokens, 2,610 anticipated (2,600 cached), 340 new — anticipated at src/a.py:12 (warm)');
    const unused = { ...explain, anticipated: { ...anticipated, used: 0, kept: 0, anticipated_tokens: 0 } };
    expect(explainSummary(unused)).not.toContain('anticipated');
    expect(renderExplainTable(unused)).toContain('anticipated context at src/a.py:12 (warm) not used by this question');
  });
  it('marks a repetition stop as such and a cut answer with Continue', () => {
    expect(stopNote({ repeated: true })).toContain('repeating itself');
    expect(stopNote({ truncated: true })).toContain('<button type="button" class="continue">Continue</button>');
    expect(stopNote({})).toBe('');
  });
});
