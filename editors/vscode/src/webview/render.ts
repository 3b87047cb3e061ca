// Pure HTML rendering for the chat webview: a small, escape-first markdown subset and the
// explain-context table. Everything from the model is escaped before any markup is added, so no
// model output can inject elements, attributes, scripts or remote resources. Workspace locations
// become `button.loc` elements (data-path, data-line) that the page turns into `open` messages.

import { highlight } from './highlight';
import {
  type Anticipated, MAX_HEADING_CHARS, parseLocation, type Citations, type EditView, type Explain, type Location, type RetrievedChunk, type ToolView,
  type Verification,
} from '../protocol';

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

/**
 * A button that asks the host to open `loc` (the page's click handler posts `{type: 'open'}`).
 * `labelHtml` must already be escaped.
 */
export function locationButton(loc: Location, labelHtml: string): string {
  const line = loc.line !== undefined ? ` data-line="${loc.line}"` : '';
  const title = `Open ${loc.path}${loc.line !== undefined ? ` at line ${loc.line}` : ''}`;
  return `<button type="button" class="loc" data-path="${escapeHtml(loc.path)}"${line} title="${escapeHtml(title)}">` +
    `${labelHtml}</button>`;
}

/** `path/to/file.ext:12` or `file.ext:3-9` in running text (a file extension is required). */
const LOCATION_REF = /(?<![\w./:\\-])((?:[\w.-]+\/)*[\w.-]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,7}):(\d+)(?:[-\u2013](\d+))?(?![\w/])/g;

/** A bare `path/to/file.ext` in running text (no line): linked or marked only when the citations name it. */
const PATH_REF = /(?<![\w./:\\\u0000-])((?:[\w.-]+\/)*[\w.-]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/:\u0000])/g;

/**
 * What the node's citation check found for an answer, for marking its mentions inline: a path it names is real
 * when a real file is it or ends with it, invented when it is unknown; a `path:line` past the end of its file is
 * invented too; a code name in backticks that the workspace does not have is marked.
 */
export class CiteIndex {
  constructor(private readonly c: Citations) {}

  /** The workspace file `path` names (as the check resolved it), or null. */
  real(path: string): string | null {
    return this.c.files_real.find((r) => r === path) ?? this.c.files_real.find((r) => r.endsWith(`/${path}`)) ?? null;
  }

  /** Why the mention is not in the workspace, or null when it is not flagged. */
  unknown(path: string, line?: number, endLine?: number): string | null {
    if (this.c.files_unknown.includes(path)) return `${path} is not in the workspace`;
    const rel = this.real(path);
    if (rel !== null && line !== undefined) {
      const ref = `${rel}:${line}`;
      if (this.c.lines_unknown.includes(ref) || (endLine !== undefined && this.c.lines_unknown.includes(`${ref}-${endLine}`))) {
        return `${rel} has no line ${endLine ?? line}`;
      }
    }
    return null;
  }

  unknownSymbol(name: string): boolean {
    const bare = name.replace(/\(\)$/, '');
    return this.c.symbols_unknown.includes(bare);
  }
}

/** An invented mention, marked inline (the warning mark and the reason as its tooltip). `labelHtml` is escaped. */
function unknownRef(labelHtml: string, why: string): string {
  return `<span class="unknown-ref" title="${escapeHtml(why)}">${labelHtml}` +
    `<span class="unknown-mark" aria-label="${escapeHtml(why)}">\u26a0</span></span>`;
}

/**
 * Location references in already-escaped text as buttons (only safe workspace-relative paths); with the answer's
 * citations, invented ones are marked instead and bare paths of real files are linked too.
 */
function linkLocations(escaped: string, hold: (html: string) => string = (h) => h, cites?: CiteIndex): string {
  let out = escaped.replace(LOCATION_REF, (match: string) => {
    const loc = parseLocation(match);
    if (!loc) return match;
    const why = cites?.unknown(loc.path, loc.line, loc.endLine);
    if (why) return hold(unknownRef(match, why));
    const rel = cites?.real(loc.path);
    return hold(locationButton(rel ? { ...loc, path: rel } : loc, match));
  });
  if (cites) {
    out = out.replace(PATH_REF, (match: string) => {
      const loc = parseLocation(match);
      if (!loc) return match;
      const why = cites.unknown(loc.path);
      if (why) return hold(unknownRef(match, why));
      const rel = cites.real(loc.path);
      return rel ? hold(locationButton({ path: rel }, match)) : match;
    });
  }
  return out;
}

/** Inline markdown on already-escaped text: code spans, locations, bold, italics, links (as inert text). */
function renderInline(escaped: string, cites?: CiteIndex): string {
  const held: string[] = [];
  const hold = (html: string): string => {
    held.push(html);
    return `\u0000${held.length - 1}\u0000`;
  };
  let out = escaped.replace(/\u0000/g, '').replace(/`([^`\n]+)`/g, (_m, code: string) => {
    if (cites?.unknownSymbol(code)) {
      return hold(unknownRef(`<code>${code}</code>`, `${code} is not in the workspace`));
    }
    return hold(`<code>${linkLocations(code, hold, cites)}</code>`);
  });
  // Held, so emphasis cannot reach into a path (`pkg/__init__.py:3`) or its attributes.
  out = linkLocations(out, hold, cites);
  out = out
    .replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__([^_\n]+)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, '$1<em>$2</em>')
    // Links stay inert: the webview loads nothing and navigates nowhere; the target is shown as text.
    .replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, '<span class="link">$1</span> <span class="link-target">($2)</span>');
  // Held pieces may hold others (a location inside a code span): put them back until none is left.
  for (let pass = 0; pass < 3 && out.includes('\u0000'); pass++) {
    out = out.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => held[Number(i)] ?? '');
  }
  return out;
}

const FENCE = /^\s*(```|~~~)\s*([\w+#.-]*)\s*$/;

/**
 * Render a markdown answer (possibly still streaming: an unclosed fence is a code block so far)
 * to safe HTML. Supports fenced code, headings, lists, block quotes, paragraphs and inline marks.
 */
export function renderMarkdown(source: string, citations?: Citations | null): string {
  const cites = citations ? new CiteIndex(citations) : undefined;
  const inline = (text: string): string => renderInline(escapeHtml(text), cites);
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const html: string[] = [];
  let paragraph: string[] = [];
  let list: { ordered: boolean; start: number; items: string[][] } | null = null;

  const flushParagraph = (): void => {
    if (paragraph.length > 0) {
      html.push(`<p>${paragraph.map(inline).join('<br>')}</p>`);
      paragraph = [];
    }
  };
  const flushList = (): void => {
    if (list) {
      const tag = list.ordered ? 'ol' : 'ul';
      // A list the answer interrupted (a code block between items) goes on with its own numbers, not 1 again.
      const start = list.ordered && list.start !== 1 ? ` start="${list.start}"` : '';
      html.push(`<${tag}${start}>${list.items.map((i) => `<li>${i.map(inline).join('<br>')}</li>`).join('')}</${tag}>`);
      list = null;
    }
  };
  const BULLET = /^\s*[-*+]\s+(.*)$/;
  const NUMBERED = /^\s*(\d{1,9})[.)]\s+(.*)$/;
  /** The next non-blank line after `i` continues the open list (an item of its kind, or an indented line). */
  const listGoesOn = (i: number): boolean => {
    let j = i + 1;
    while (j < lines.length && (lines[j] ?? '').trim() === '') j++;
    const next = lines[j] ?? '';
    if (!list || j >= lines.length || FENCE.test(next)) return false;
    return list.ordered ? NUMBERED.test(next) || /^\s{2,}\S/.test(next)
      : (BULLET.test(next) && !NUMBERED.test(next)) || /^\s{2,}\S/.test(next);
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
      const langAttr = (lang ? ` data-lang="${escapeHtml(lang)}"` : '') + headingAttr(lines, i - body.length - 1);
      const label = lang ? `<div class="code-lang">${escapeHtml(lang)}</div>` : '';
      const state = closed ? '' : ' class="streaming"';
      const code = body.join('\n');
      // Copy / Insert / Apply once the block is whole (the page reads the text from the block itself).
      const actions = closed
        ? '<div class="code-actions"><button type="button" class="copy-code" title="Copy to the clipboard">Copy</button>' +
          '<button type="button" class="insert-code" title="Insert at the cursor of the last active editor">Insert</button>' +
          '<button type="button" class="apply-code" title="Apply to the file the block is for (the definitions it ' +
          'replaces, or the selection), after a diff preview">Apply</button></div>'
        : '';
      html.push(`<div class="code-block"${langAttr}>${label}${actions}<pre${state}><code>${highlight(code, lang)}</code></pre></div>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flushParagraph();
      flushList();
      const level = Math.min((heading[1] ?? '#').length + 2, 6); // h3..h6 inside a chat bubble
      html.push(`<h${level}>${inline(heading[2] ?? '')}</h${level}>`);
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = NUMBERED.exec(line);
    if (bullet || numbered) {
      flushParagraph();
      const ordered = numbered !== null && bullet === null;
      if (list && list.ordered !== ordered) flushList();
      if (!list) list = { ordered, start: numbered ? Number(numbered[1]) : 1, items: [] };
      list.items.push([(numbered ? numbered[2] : bullet?.[1]) ?? '']);
      continue;
    }
    if (list && /^\s{2,}\S/.test(line) && !FENCE.test(line)) { // an item's indented continuation
      list.items[list.items.length - 1]?.push(line.trim());
      continue;
    }
    const header = tableCells(line);
    const divider = header ? tableCells(lines[i + 1] ?? '') : null;
    if (header && divider && divider.length === header.length && divider.every((c) => /^:?-{1,}:?$/.test(c))) {
      flushParagraph();
      flushList();
      const align = divider.map((c) => (c.endsWith(':') ? (c.startsWith(':') ? 'center' : 'right') : ''));
      const cell = (tag: string, text: string, col: number): string =>
        `<${tag}${align[col] ? ` style="text-align:${align[col]}"` : ''}>${inline(text)}</${tag}>`;
      const rows: string[] = [];
      for (i += 2; i < lines.length; i++) {
        const cells = tableCells(lines[i] ?? '');
        if (!cells) break;
        rows.push(`<tr>${header.map((_, col) => cell('td', cells[col] ?? '', col)).join('')}</tr>`);
      }
      i--; // the line that ended the table is read again by the loop
      html.push(`<table class="md-table"><thead><tr>${header.map((h, col) => cell('th', h, col)).join('')}</tr>` +
        `</thead><tbody>${rows.join('')}</tbody></table>`);
      continue;
    }
    const quote = /^\s*>\s?(.*)$/.exec(line);
    if (quote) {
      flushParagraph();
      flushList();
      html.push(`<blockquote>${inline(quote[1] ?? '')}</blockquote>`);
      continue;
    }
    if (line.trim() === '') {
      flushParagraph();
      if (!listGoesOn(i)) flushList(); // a blank line between items keeps one list (not "1. 1. 1.")
      continue;
    }
    flushList();
    paragraph.push(line);
  }
  flushParagraph();
  flushList();
  return html.join('\n');
}

/**
 * The line before a code block (within two lines, not a fence) as a `data-heading` attribute: it may name the
 * block's file ("In `pkg/timed.py`:"), which Apply sends to the node with the block.
 */
function headingAttr(lines: readonly string[], fenceLine: number): string {
  for (let j = fenceLine - 1; j >= Math.max(0, fenceLine - 2); j--) {
    const text = (lines[j] ?? '').trim();
    if (text === '') continue;
    if (FENCE.test(text) || text.length > MAX_HEADING_CHARS) return '';
    return ` data-heading="${escapeHtml(text)}"`;
  }
  return '';
}

/** The cells of a markdown table row (`| a | b |`), or null when the line is not one. */
function tableCells(line: string): string[] | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith('|') || trimmed.length < 3 || !trimmed.endsWith('|')) return null;
  return trimmed.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
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
    `<td>${fmtInt(t?.new)}</td><td>${formatPct(t?.hit_pct)}</td></tr></tfoot></table></div>` +
    renderAnticipated(explain.anticipated ?? null) + renderRetrieved(explain.retrieved ?? []) +
    renderCitations(explain.citations ?? null) + renderNotes(explain.notes ?? []);
}

/** The anticipated part of the retrieved code in words (what explain-context's CLI line says). */
function renderAnticipated(a: Anticipated | null): string {
  if (!a) return '';
  const text = a.used > 0
    ? `retrieved: ${fmtInt(a.retrieved_tokens)} tokens, ${fmtInt(a.anticipated_tokens)} anticipated ` +
      `(${fmtInt(a.cached_tokens)} cached), ${fmtInt(a.new_tokens)} new — anticipated at ${a.place} (${a.state})`
    : `anticipated context at ${a.place} (${a.state}) not used by this question`;
  return `<div class="anticipated">${escapeHtml(text)}</div>`;
}

/** `path:start-end` as an open-file button, or escaped text when it is not a safe workspace location. */
function locationOrText(text: string): string {
  const loc = parseLocation(text);
  return loc ? locationButton(loc, escapeHtml(text)) : `<code>${escapeHtml(text)}</code>`;
}

/** The retrieved code, best first: where, what, its size (or "cached"), status and why it was chosen. */
export function renderRetrieved(chunks: readonly RetrievedChunk[]): string {
  if (chunks.length === 0) return '';
  const items = chunks.map((c) => {
    const cached = c.status === 'in thread';
    const size = cached ? 'cached' : `${fmtInt(c.tokens)} tok`;
    const reasons = (c.reasons ?? []).map((r) => `<span class="reason">${escapeHtml(r)}</span>`).join('; ');
    return `<li class="chunk" data-status="${escapeHtml(c.status)}">${locationOrText(c.id)} ` +
      `<span class="chunk-name">${escapeHtml(c.name)}</span> ` +
      `<span class="chunk-tokens">${size}</span> ` +
      `<span class="chunk-status">${escapeHtml(c.status)}</span>` +
      (reasons ? ` <span class="reasons">${reasons}</span>` : '') + '</li>';
  });
  return `<div class="retrieved"><div class="explain-heading">retrieved code</div>` +
    `<ol class="retrieved" aria-label="Retrieved code">${items.join('')}</ol></div>`;
}

/** "cited: N real, M unknown", the real files as links, and the unknown names flagged. */
export function renderCitations(c: Citations | null): string {
  if (!c) return '';
  const real = c.files_real.length + c.symbols_real.length;
  const unknownNames = [...c.files_unknown, ...c.symbols_unknown, ...c.lines_unknown];
  const parts = [`<span class="cited-summary">cited: ${real} real, ${unknownNames.length} unknown</span>`];
  const realHtml = [
    ...c.files_real.map(locationOrText),
    ...c.symbols_real.map((s) => `<code>${escapeHtml(s)}</code>`),
  ];
  if (realHtml.length > 0) parts.push(`<div class="cited-real">${realHtml.join(' ')}</div>`);
  if (unknownNames.length > 0) {
    const flagged = unknownNames
      .map((n) => `<span class="unknown" title="not in the workspace">${escapeHtml(n)}</span>`)
      .join(', ');
    parts.push(`<div class="cited-unknown" role="note"><span class="warn-label">\u26a0 not in the workspace:</span> ${flagged}</div>`);
  }
  const cls = unknownNames.length > 0 ? 'citations has-unknown' : 'citations';
  return `<div class="${cls}" data-real="${real}" data-unknown="${unknownNames.length}">${parts.join('')}</div>`;
}

/** Every budget/layout decision of the turn, in words. */
export function renderNotes(notes: readonly string[]): string {
  if (notes.length === 0) return '';
  return `<div class="notes"><div class="explain-heading">notes</div>` +
    `<ul class="notes">${notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul></div>`;
}

/** One line of a unified diff, classed by what it does (added, removed, hunk header, file header). */
function diffLine(line: string): string {
  const cls = line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff --git') ? 'file'
    : line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
  return `<span class="diff-${cls}">${escapeHtml(line)}</span>`;
}

const VERDICT_MARK: Record<Verification['status'], string> = { passed: '\u2713', failed: '\u2717', skipped: '\u2013' };

/**
 * The verdict on a proposed fix: "verified: `cmd` passed (2 of 4 candidates)" with a check mark, or "not verified:
 * ..." with the node's reason. A check that passed before the change too ("checked: ... still passes ...") or a
 * test the model wrote ("verified by a test the model wrote ...") is said in the node's own words, the former
 * without the check mark. The whole summary (repair rounds, time spent) is the tooltip.
 */
export function renderVerification(v: Verification): string {
  let text: string;
  const head = (v.summary.split(/; \d+ repair round\(s\)/)[0] ?? '').trim();
  const checked = v.status === 'passed' && /^checked\b/i.test(head);
  if (v.status === 'passed' && /^(?:checked|verified by)\b/i.test(head)) {
    text = renderInline(escapeHtml(head));
  } else if (v.status === 'passed') {
    text = `verified: <code>${escapeHtml(v.command)}</code> passed (${v.passed} of ${v.candidates} ` +
      `candidate${v.candidates === 1 ? '' : 's'})`;
  } else {
    const fallback = v.status === 'failed' && v.command
      ? `\`${v.command}\` failed for all ${v.candidates} candidate${v.candidates === 1 ? '' : 's'}` : 'nothing was run';
    const summary = v.summary.trim() || fallback;
    text = renderInline(escapeHtml(/^not verified\b/i.test(summary) ? summary : `not verified: ${summary}`));
  }
  const title = v.summary.trim() ? ` title="${escapeHtml(v.summary.trim())}"` : '';
  return `<div class="verification verify-${checked ? 'checked' : v.status}" data-status="${v.status}" role="note"${title}>` +
    `<span class="verify-mark" aria-hidden="true">${checked ? '\u2013' : VERDICT_MARK[v.status]}</span> ${text}</div>`;
}

/**
 * The answer's proposed edits: the verdict of checking them (when the node verified), then per file its path
 * (opens it), Apply / Reject and the diff; then the edit blocks the node could not place, each with why. The
 * buttons carry the edit's index.
 */
export function renderEdits(edits: readonly EditView[], problems: readonly string[],
  verification?: Verification | null): string {
  const items = edits.map((edit, index) => {
    const lines = edit.diff.replace(/\n$/, '').split('\n').map(diffLine).join('\n');
    const label = `${edit.isNew ? 'Create' : 'Edit'} ${escapeHtml(edit.path)}`;
    return `<div class="edit" data-index="${index}">` +
      `<div class="edit-head">${locationButton({ path: edit.path }, label)} ` +
      `<button class="apply-edit" data-index="${index}">Apply</button> ` +
      `<button class="reject-edit" data-index="${index}">Reject</button> <span class="edit-status"></span></div>` +
      `<pre class="diff">${lines}</pre></div>`;
  });
  const notes = problems.map((p) => `<div class="edit-problem" role="note">Edit not applied: ${escapeHtml(p)}</div>`);
  const verdict = verification ? renderVerification(verification) : '';
  return items.length + notes.length === 0 && !verdict ? ''
    : `<div class="edits">${verdict}${items.join('')}${notes.join('')}</div>`;
}

const TOOL_STATUS: Record<ToolView['status'], string> = { in_progress: '…', completed: '✓', failed: '✗' };

/** One tool call of an agent turn: its status and title (the summary of a collapsed step), then its output. */
export function renderToolStep(tool: ToolView): string {
  const output = tool.output ? `<pre class="tool-output">${escapeHtml(tool.output)}</pre>` : '';
  return `<summary class="tool-${tool.status}" data-kind="${escapeHtml(tool.kind)}">` +
    `<span class="tool-status" aria-label="${tool.status.replace('_', ' ')}">${TOOL_STATUS[tool.status]}</span> ` +
    `${escapeHtml(tool.title)}</summary>${output}`;
}

/**
 * The explain context of an answer in one line, the summary of its collapsed details: "23 chunks · 60% cached ·
 * cited 2 real, 1 unknown" (the unknown count in the warning colour). Escaped HTML.
 */
export function explainSummary(explain: Explain): string {
  const chunks = (explain.retrieved ?? []).length;
  const parts = [`${chunks} chunk${chunks === 1 ? '' : 's'}`, `${formatPct(explain.totals?.hit_pct)} cached`];
  const a = explain.anticipated;
  if (a && a.used > 0) parts.push(`${fmtInt(a.cached_tokens)} of ${fmtInt(a.retrieved_tokens)} code tokens anticipated`);
  const c = explain.citations;
  if (c) {
    const real = c.files_real.length + c.symbols_real.length;
    const unknown = c.files_unknown.length + c.symbols_unknown.length + c.lines_unknown.length;
    parts.push(unknown > 0
      ? `cited ${real} real, <span class="unknown-count">${unknown} unknown</span>`
      : `cited ${real} real, 0 unknown`);
  }
  return `<span class="explain-summary">${parts.join(' \u00b7 ')}</span>`;
}

/** How an answer ended when it did not simply end: the note under it (or ''). */
export function stopNote(msg: { truncated?: boolean; repeated?: boolean }): string {
  if (msg.repeated) {
    return '<div class="note repeated" role="note">\u21bb Stopped: the answer began repeating itself; the repeats ' +
      'were dropped. Ask again, or rephrase, for more.</div>';
  }
  if (msg.truncated) {
    return '<div class="note truncated">The answer was cut at the length limit. ' +
      '<button type="button" class="continue">Continue</button></div>';
  }
  return '';
}
