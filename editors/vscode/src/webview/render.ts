// Pure HTML rendering for the chat webview: a small, escape-first markdown subset and the
// explain-context table. Everything from the model is escaped before any markup is added, so no
// model output can inject elements, attributes, scripts or remote resources.

import type { Explain } from '../protocol';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** Inline markdown on already-escaped text: code spans, bold, italics, links (as inert text). */
function renderInline(escaped: string): string {
  const codeSpans: string[] = [];
  let out = escaped.replace(/`([^`\n]+)`/g, (_m, code: string) => {
    codeSpans.push(`<code>${code}</code>`);
    return `\u0000${codeSpans.length - 1}\u0000`;
  });
  out = out
    .replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__([^_\n]+)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, '$1<em>$2</em>')
    // Links stay inert: the webview loads nothing and navigates nowhere; the target is shown as text.
    .replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, '<span class="link">$1</span> <span class="link-target">($2)</span>');
  return out.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => codeSpans[Number(i)] ?? '');
}

const FENCE = /^\s*(```|~~~)\s*([\w+#.-]*)\s*$/;

/**
 * Render a markdown answer (possibly still streaming: an unclosed fence is a code block so far)
 * to safe HTML. Supports fenced code, headings, lists, block quotes, paragraphs and inline marks.
 */
export function renderMarkdown(source: string): string {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const html: string[] = [];
  let paragraph: string[] = [];
  let list: { ordered: boolean; items: string[] } | null = null;

  const flushParagraph = (): void => {
    if (paragraph.length > 0) {
      html.push(`<p>${paragraph.map((l) => renderInline(escapeHtml(l))).join('<br>')}</p>`);
      paragraph = [];
    }
  };
  const flushList = (): void => {
    if (list) {
      const tag = list.ordered ? 'ol' : 'ul';
      html.push(`<${tag}>${list.items.map((i) => `<li>${renderInline(escapeHtml(i))}</li>`).join('')}</${tag}>`);
      list = null;
    }
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fence = FENCE.exec(line);
    if (fence) {
      flushParagraph();
      flushList();
      const marker = fence[1] ?? '```';
      const lang = fence[2] ?? '';
      const body: string[] = [];
      let closed = false;
      for (i = i + 1; i < lines.length; i++) {
        const inner = lines[i] ?? '';
        if (inner.trim() === marker) {
          closed = true;
          break;
        }
        body.push(inner);
      }
      const langAttr = lang ? ` data-lang="${escapeHtml(lang)}"` : '';
      const label = lang ? `<div class="code-lang">${escapeHtml(lang)}</div>` : '';
      const state = closed ? '' : ' class="streaming"';
      html.push(`<div class="code-block"${langAttr}>${label}<pre${state}><code>${escapeHtml(body.join('\n'))}</code></pre></div>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flushParagraph();
      flushList();
      const level = Math.min((heading[1] ?? '#').length + 2, 6); // h3..h6 inside a chat bubble
      html.push(`<h${level}>${renderInline(escapeHtml(heading[2] ?? ''))}</h${level}>`);
      continue;
    }
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    if (bullet || numbered) {
      flushParagraph();
      const ordered = numbered !== null && bullet === null;
      if (list && list.ordered !== ordered) flushList();
      if (!list) list = { ordered, items: [] };
      list.items.push((bullet ?? numbered)?.[1] ?? '');
      continue;
    }
    const quote = /^\s*>\s?(.*)$/.exec(line);
    if (quote) {
      flushParagraph();
      flushList();
      html.push(`<blockquote>${renderInline(escapeHtml(quote[1] ?? ''))}</blockquote>`);
      continue;
    }
    if (line.trim() === '') {
      flushParagraph();
      flushList();
      continue;
    }
    flushList();
    paragraph.push(line);
  }
  flushParagraph();
  flushList();
  return html.join('\n');
}

function fmtInt(n: number | null | undefined): string {
  return typeof n === 'number' && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–';
}

export function formatSeconds(ms: number | null | undefined): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '–';
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

export function formatPct(pct: number | null | undefined): string {
  if (typeof pct !== 'number' || !Number.isFinite(pct)) return '–';
  return `${Math.round(pct)}%`;
}

/** The explain-context table shown under each answer (and for "Explain Context"). */
export function renderExplainTable(explain: Explain | null | undefined): string {
  if (!explain) {
    return '<div class="explain empty">No turn yet: ask something first to see what the model was given.</div>';
  }
  const rows = (explain.segments ?? [])
    .map((s) => {
      const inval = s.invalidated_by ? escapeHtml(s.invalidated_by) : '';
      return `<tr data-kind="${escapeHtml(s.kind)}"><th scope="row">${escapeHtml(s.kind)}</th>` +
        `<td>${fmtInt(s.tokens)}</td><td>${fmtInt(s.cached)}</td><td>${fmtInt(s.new)}</td><td>${inval}</td></tr>`;
    })
    .join('');
  const t = explain.totals;
  const summary = [
    `turn ${fmtInt(explain.turn)}`,
    escapeHtml(explain.model ?? ''),
    `${formatPct(t?.hit_pct)} cached`,
    `ttft ${formatSeconds(explain.ttft_ms)}`,
  ].filter((x) => x !== '').join(' · ');
  return `<div class="explain-wrap"><table class="explain" aria-label="Explain context">` +
    `<caption>${summary}</caption>` +
    `<thead><tr><th scope="col">segment</th><th scope="col">tokens</th><th scope="col">cached</th>` +
    `<th scope="col">new</th><th scope="col">invalidated by</th></tr></thead>` +
    `<tbody>${rows}</tbody>` +
    `<tfoot><tr><th scope="row">total</th><td>${fmtInt(t?.tokens)}</td><td>${fmtInt(t?.cached)}</td>` +
    `<td>${fmtInt(t?.new)}</td><td>${formatPct(t?.hit_pct)}</td></tr></tfoot></table></div>`;
}
