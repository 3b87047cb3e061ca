import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type Explain,
  isExplain,
  isFromWebview,
  isSafeRelativePath,
  isToWebview,
  isVerification,
  MAX_DRAFT_CHARS,
  Methods,
  parseLocation,
  SEGMENT_KINDS,
  toAnticipation,
  toCompletionInfo,
  toEdits,
  toExplain,
  toResolvedBlock,
  toVerification,
  VERIFICATION_STATUSES,
} from '../../src/protocol';
import { renderExplainTable } from '../../src/webview/render';
import { EXPLAIN } from './fixtures';

describe('workspace locations', () => {
  it('accepts only workspace-relative paths without ..', () => {
    for (const ok of ['a.py', 'pkg/signer.py', './pkg/a.py', 'src/my..name.ts', '.github/workflows/ci.yml']) {
      expect(isSafeRelativePath(ok), ok).toBe(true);
    }
    for (const bad of ['', '/etc/passwd', '../x.py', 'a/../../x.py', 'a/..', 'a//b.py', 'C:/x.py', 'c:x.py',
      'file:///etc/passwd', 'https://evil.example/x.py', 'a\\b.py', '~/x.py', 'a\u0000.py', 'a\nb.py', 'x'.repeat(1025)]) {
      expect(isSafeRelativePath(bad), bad).toBe(false);
    }
  });
  it('parses path:line and path:start-end', () => {
    expect(parseLocation('pkg/signer.py:40-72')).toEqual({ path: 'pkg/signer.py', line: 40, endLine: 72 });
    expect(parseLocation('pkg/signer.py:12')).toEqual({ path: 'pkg/signer.py', line: 12 });
    expect(parseLocation('a.py:3\u20139')).toEqual({ path: 'a.py', line: 3, endLine: 9 });
    expect(parseLocation('./a.py:7')).toEqual({ path: 'a.py', line: 7 });
    expect(parseLocation('a.py:0')).toEqual({ path: 'a.py' });
    expect(parseLocation('pkg/signer.py')).toEqual({ path: 'pkg/signer.py' });
    expect(parseLocation('../a.py:3')).toBeNull();
    expect(parseLocation('/abs/a.py:3-4')).toBeNull();
    expect(parseLocation('https://x.example/a.py:3')).toBeNull();
  });
});

describe('Explain guards', () => {
  it('knows the twelve segment kinds in prompt order', () => {
    expect(SEGMENT_KINDS).toEqual(['system', 'tools', 'policy', 'instructions', 'repo_map', 'pins', 'history',
      'map_delta', 'diff', 'terminal', 'retrieved', 'user']);
  });
  it('accepts the full shape, with and without citations', () => {
    expect(isExplain(EXPLAIN)).toBe(true);
    expect(isExplain({ ...EXPLAIN, citations: null, measured_recomputed_tokens: null, ttft_ms: null })).toBe(true);
  });
  it('rejects missing or mistyped new fields', () => {
    const { notes: _n, ...noNotes } = EXPLAIN;
    expect(isExplain(noNotes)).toBe(false);
    expect(isExplain({ ...EXPLAIN, notes: [1] })).toBe(false);
    expect(isExplain({ ...EXPLAIN, retrieved: [{ ...EXPLAIN.retrieved[0], status: 'maybe' }] })).toBe(false);
    expect(isExplain({ ...EXPLAIN, retrieved: [{ ...EXPLAIN.retrieved[0], reasons: 'BM25' }] })).toBe(false);
    expect(isExplain({ ...EXPLAIN, citations: { ...EXPLAIN.citations, lines_unknown: undefined } })).toBe(false);
    expect(isExplain({ ...EXPLAIN, citations: undefined })).toBe(false);
  });
  it('the page drops done/explain messages whose explain is malformed', () => {
    expect(isToWebview({ type: 'done', chatId: 'c', text: 't', explain: EXPLAIN })).toBe(true);
    expect(isToWebview({ type: 'done', chatId: 'c', text: 't', explain: null })).toBe(true);
    expect(isToWebview({ type: 'done', chatId: 'c', text: 't', explain: { turn: 1 } })).toBe(false);
    expect(isToWebview({ type: 'explain', explain: EXPLAIN })).toBe(true);
    expect(isToWebview({ type: 'explain', explain: 'x' })).toBe(false);
  });
  it('the host fills an older node\'s missing fields and drops malformed entries', () => {
    const { notes: _n, retrieved: _r, citations: _c, ...old } = EXPLAIN;
    const filled = toExplain(old);
    expect(filled).toEqual({ ...old, notes: [], retrieved: [], citations: null });
    expect(isExplain(filled)).toBe(true);
    const messy = toExplain({
      ...EXPLAIN,
      notes: ['kept', 3],
      retrieved: [{ id: 'a.py:1-2', tokens: 5, status: 'odd', reasons: ['x', null] }, { name: 'no id' }],
      citations: { files_real: ['a.py'] },
    });
    expect(messy?.notes).toEqual(['kept']);
    expect(messy?.retrieved).toEqual([{ id: 'a.py:1-2', name: '', tokens: 5, status: 'new', reasons: ['x'] }]);
    expect(messy?.citations).toEqual({ files_real: ['a.py'], files_unknown: [], symbols_real: [], symbols_unknown: [], lines_unknown: [] });
    expect(isExplain(messy)).toBe(true);
    expect(toExplain(EXPLAIN)).toEqual(EXPLAIN);
    const anticipated = { place: 'a.py:3', state: 'warm', retrieved_tokens: 900, anticipated_tokens: 600,
      cached_tokens: 576, new_tokens: 324, used: 2, kept: 0, dropped: 1 };
    expect(toExplain({ ...EXPLAIN, anticipated })?.anticipated).toEqual(anticipated);
    expect(toExplain({ ...EXPLAIN, anticipated: { place: 'a.py:3', used: 'two' } })?.anticipated).toBeUndefined();
    expect(toExplain(null)).toBeNull();
    expect(toExplain({ turn: 1 })).toBeNull();
  });
  it('accepts a well-formed open message only', () => {
    expect(isFromWebview({ type: 'open', path: 'a.py', line: 3 })).toBe(true);
    expect(isFromWebview({ type: 'open', path: 'a.py' })).toBe(true);
    expect(isFromWebview({ type: 'open', path: '../a.py' })).toBe(false);
    expect(isFromWebview({ type: 'open', path: 'a.py', line: -1 })).toBe(false);
  });
});

describe('toCompletionInfo', () => {
  it('keeps a well-formed answer', () => {
    const info = { available: false, reason: 'smollm2-135m has no fill-in-the-middle format', model: 'smollm2-135m' };
    expect(toCompletionInfo(info)).toEqual(info);
  });
  it('fills a missing reason and model, rejects anything without `available`', () => {
    expect(toCompletionInfo({ available: true })).toEqual({ available: true, reason: null, model: '' });
    expect(toCompletionInfo({ reason: 'x' })).toBeNull();
    expect(toCompletionInfo(null)).toBeNull();
    expect(toCompletionInfo([true])).toBeNull();
  });
});

describe('the node\'s own Explain JSON (scripts/golden-explain.py)', () => {
  const golden: unknown = JSON.parse(fs.readFileSync(new URL('./explain.golden.json', import.meta.url), 'utf8'));

  it('passes the strict guard unchanged', () => {
    expect(isExplain(golden)).toBe(true);
    expect(toExplain(golden)).toEqual(golden);
  });

  it('renders every chunk, the citations and the notes', () => {
    const explain = golden as Explain;
    const html = renderExplainTable(explain);
    expect(html).toContain('data-path="itsdangerous/signer.py" data-line="120"');
    expect(html).toContain('<span class="reason">stack trace line 42</span>');
    expect(html).toContain('cited: 2 real, 3 unknown');
    for (const note of explain.notes) expect(html).toContain(`<li>${note}</li>`);
    for (const s of explain.segments) expect(SEGMENT_KINDS).toContain(s.kind);
  });
});

describe('verification of a proposed fix', () => {
  const PASSED = {
    status: 'passed', summary: 'verified: `pytest -q` passed (2 of 4 candidates); 0 repair round(s); decode 3.0 s, ' +
      'apply 0.1 s, check 2.2 s', command: 'pytest -q', candidates: 4, passed: 2, chosen: 3,
  };
  const SKIPPED = { status: 'skipped', summary: 'not verified: no check command', command: '', candidates: 0,
    passed: 0, chosen: null };

  it('knows the statuses and the consent request', () => {
    expect(VERIFICATION_STATUSES).toEqual(['passed', 'failed', 'skipped']);
    expect(Methods.allowCheck).toBe('contenox/allowCheck');
  });
  it('accepts what the node sends, keeping only its fields', () => {
    expect(toVerification(PASSED)).toEqual(PASSED);
    expect(toVerification(SKIPPED)).toEqual(SKIPPED);
    expect(toVerification({ ...PASSED, extra: { big: 'x' } })).toEqual(PASSED);
  });
  it('drops a missing or malformed one', () => {
    for (const bad of [null, undefined, 'passed', [], { ...PASSED, status: 'maybe' }, { ...PASSED, summary: 1 },
      { ...PASSED, command: null }, { ...PASSED, candidates: -1 }, { ...PASSED, passed: 1.5 },
      { ...PASSED, passed: 5 }, { ...PASSED, chosen: 0 }, { ...PASSED, chosen: '3' },
      (({ chosen: _c, ...rest }) => rest)(PASSED)]) {
      expect(toVerification(bad), JSON.stringify(bad)).toBeNull();
      expect(isVerification(bad)).toBe(false);
    }
  });
  it('the page drops a done message whose verification is malformed', () => {
    const done = { type: 'done', chatId: 'c', text: 't', explain: null };
    expect(isToWebview({ ...done, verification: PASSED })).toBe(true);
    expect(isToWebview({ ...done, verification: SKIPPED })).toBe(true);
    expect(isToWebview({ ...done, verification: { ...PASSED, status: 'ok' } })).toBe(false);
    expect(isToWebview({ ...done, verification: null })).toBe(false);
  });
});

describe('contenox/resolveBlock', () => {
  it('keeps well-formed edits and safe paths only', () => {
    const edit = { path: 'a.py', uri: 'file:///ws/a.py', diff: 'd', oldText: 'x', newText: 'y' };
    expect(Methods.resolveBlock).toBe('contenox/resolveBlock');
    expect(toResolvedBlock({ edits: [edit, { path: '../x', uri: 'u', diff: '', oldText: null, newText: '' }],
      problems: ['p', 3], notes: ['n'], candidates: ['a.py', '/etc/passwd', '../b.py'], named: '../x', wholeFile: true }))
      .toEqual({ edits: [edit], problems: ['p'], notes: ['n'], candidates: ['a.py'], named: null, wholeFile: true });
    expect(toResolvedBlock(null)).toEqual({ edits: [], problems: [], notes: [], candidates: [], named: null, wholeFile: false });
  });
  it('a deleted file (a rename that moves it) is an edit; an edit with neither text is not', () => {
    const gone = { path: 'a.js', uri: 'file:///ws/a.js', diff: 'd', oldText: 'x', newText: null };
    const empty = { path: 'b.js', uri: 'file:///ws/b.js', diff: 'd', oldText: null, newText: null };
    expect(toEdits([gone, empty])).toEqual([gone]);
  });
  it('the page sends a block with one heading line, the host sends progress', () => {
    expect(isFromWebview({ type: 'applyCode', text: 'x', heading: 'h', question: 'q', lang: 'c++' })).toBe(true);
    expect(isFromWebview({ type: 'applyCode', text: 'x', heading: 'a\nb' })).toBe(false);
    expect(isFromWebview({ type: 'applyCode', text: 'x', lang: 'py thon' })).toBe(false);
    expect(isFromWebview({ type: 'applyCode', text: 'x', heading: 'h'.repeat(301) })).toBe(false);
    expect(isToWebview({ type: 'progress', chatId: 'c', text: '3 of 4' })).toBe(true);
    expect(isToWebview({ type: 'done', chatId: 'c', text: '', explain: null, repeated: 'yes' })).toBe(false);
  });
});

describe('anticipated context (issue 29)', () => {
  it('names the two notifications', () => {
    expect(Methods.focus).toBe('contenox/focus');
    expect(Methods.anticipation).toBe('$/contenox/anticipation');
  });
  it('the page sends its draft, up to MAX_DRAFT_CHARS', () => {
    expect(isFromWebview({ type: 'draft', text: 'why does parse' })).toBe(true);
    expect(isFromWebview({ type: 'draft', text: '' })).toBe(true);
    expect(isFromWebview({ type: 'draft', text: 'x'.repeat(MAX_DRAFT_CHARS) })).toBe(true);
    expect(isFromWebview({ type: 'draft', text: 'x'.repeat(MAX_DRAFT_CHARS + 1) })).toBe(false);
    expect(isFromWebview({ type: 'draft' })).toBe(false);
    expect(isFromWebview({ type: 'draft', text: 3 })).toBe(false);
  });
  it('toAnticipation keeps a well-formed notification and rejects an unknown state', () => {
    const warm = { uri: 'file:///ws/parser.py', state: 'warm', tokens: 1840, text: 'warm for parser.py: 1,840 tokens prefilled' };
    expect(toAnticipation(warm)).toEqual(warm);
    expect(toAnticipation({ state: 'idle', tokens: 0, text: '' })).toEqual({ state: 'idle', tokens: 0, text: '' });
    // Missing or bad counts and text are filled in; one line of text only.
    expect(toAnticipation({ state: 'computing', tokens: -3, text: 'a\nb', uri: 7 }))
      .toEqual({ state: 'computing', tokens: 0, text: 'a' });
    expect(toAnticipation({ state: 'hot', tokens: 1, text: '' })).toBeNull();
    expect(toAnticipation({ tokens: 1 })).toBeNull();
    expect(toAnticipation(null)).toBeNull();
  });
});
