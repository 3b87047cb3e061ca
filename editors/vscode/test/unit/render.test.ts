import { describe, expect, it } from 'vitest';
import { escapeHtml, renderExplainTable, renderMarkdown } from '../../src/webview/render';
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
    expect(html).toContain('<div class="code-block" data-lang="python">');
    expect(html).toContain('if a &lt; b and c &gt; d:\n    print(&quot;&lt;b&gt;&quot;)');
    expect(html).toContain('<p>after</p>');
  });
  it('renders an unclosed fence while streaming', () => {
    const html = renderMarkdown('```ts\nconst x = 1;');
    expect(html).toContain('<pre class="streaming"><code>const x = 1;</code></pre>');
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
    expect(html).toContain('<th scope="row">total</th><td>900</td><td>832</td><td>68</td><td>92%</td>');
    expect(html).toContain('<caption>turn 3 · smollm2-135m · 92% cached · ttft 0.4 s</caption>');
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
  it('makes 32-character alphanumeric nonces that differ', () => {
    const a = makeNonce();
    expect(a).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(makeNonce()).not.toBe(a);
  });
});
