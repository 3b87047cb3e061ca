import { describe, expect, it } from 'vitest';
import { highlight, languageOf } from '../../src/webview/highlight';
import { renderMarkdown } from '../../src/webview/render';

describe('highlight', () => {
  it('marks keywords, strings, numbers and comments of known languages, escaped', () => {
    expect(highlight('def f(x):  # <b>\n    return "a<b" + 1', 'python')).toBe(
      '<span class="tok-keyword">def</span> f(x):  <span class="tok-comment"># &lt;b&gt;</span>\n' +
      '    <span class="tok-keyword">return</span> <span class="tok-string">&quot;a&lt;b&quot;</span> + ' +
      '<span class="tok-number">1</span>');
    expect(highlight('const s = `x`; // done', 'ts')).toBe(
      '<span class="tok-keyword">const</span> s = <span class="tok-string">`x`</span>; ' +
      '<span class="tok-comment">// done</span>');
    expect(highlight('returning = 2', 'py')).toBe('returning = <span class="tok-number">2</span>'); // whole words
  });

  it('shows unknown languages plain (escaped) and survives unclosed strings while streaming', () => {
    expect(languageOf('brainfuck')).toBeUndefined();
    expect(highlight('<script>if</script>', 'brainfuck')).toBe('&lt;script&gt;if&lt;/script&gt;');
    expect(highlight('x = "unfinished', 'python')).toBe('x = <span class="tok-string">&quot;unfinished</span>');
  });

  it('gives a finished code block Copy, Insert and Apply, a streaming one none', () => {
    const done = renderMarkdown('```python\nreturn 1\n```');
    expect(done).toContain('<button type="button" class="copy-code"');
    expect(done).toContain('<button type="button" class="insert-code"');
    expect(done).toContain('<button type="button" class="apply-code"');
    expect(done).toContain('<span class="tok-keyword">return</span>');
    expect(renderMarkdown('```python\nreturn 1')).not.toContain('copy-code');
  });
});

describe('markdown tables', () => {
  it('renders a pipe table with alignment, escaped, and leaves other pipes alone', () => {
    const html = renderMarkdown('Sizes:\n\n| file | lines |\n|:--|--:|\n| `a.py` | 12 |\n| <b>x</b> | 3 |\n\nafter | not a table');
    expect(html).toContain('<table class="md-table"><thead><tr><th>file</th>');
    expect(html).toContain('<th style="text-align:right">lines</th>');
    expect(html).toContain('<td><code>');
    expect(html).toContain('<td>&lt;b&gt;x&lt;/b&gt;</td><td style="text-align:right">3</td>');
    expect(html).toContain('<p>after | not a table</p>');
    expect(renderMarkdown('| a | b |\n| not a divider |')).not.toContain('<table');
  });
});
