import { beforeEach, describe, expect, it } from 'vitest';
import { applyCodeBlock, confirmQuestion, type ApplyUi } from '../../src/applyBlock';
import { applyProposedEdits } from '../../src/applyEdit';
import type { ProposedEdit, ResolveBlockParams, ResolvedBlock } from '../../src/protocol';
import { created, documents, Position, Range, WorkspaceEdit } from '../mocks/vscode';

const edit = (path: string, oldText: string | null, newText: string): ProposedEdit =>
  ({ path, uri: `file:///ws/${path}`, diff: `diff --git a/${path} b/${path}\n`, oldText, newText });
const resolved = (r: Partial<ResolvedBlock>): ResolvedBlock =>
  ({ edits: [], problems: [], notes: [], candidates: [], named: null, wholeFile: false, ...r });

/** A fake editor UI that records what it was asked. */
function fakeUi(opts: { pick?: string; confirm?: boolean; selection?: boolean } = {}): ApplyUi & { log: string[] } {
  const log: string[] = [];
  return {
    log,
    scope: () => 'file:///ws/app.py',
    pickFile: async (c) => { log.push(`pick:${c.join(',')}`); return opts.pick; },
    confirm: async (edits, question) => { log.push(`confirm:${edits.map((e) => e.path).join(',')}:${question}`); return opts.confirm ?? true; },
    apply: async (edits) => { log.push(`apply:${edits.map((e) => e.path).join(',')}`); return null; },
    hasSelection: () => opts.selection ?? false,
    replaceSelection: async (text) => { log.push(`selection:${text}`); return null; },
    status: (text) => { log.push(`status:${text}`); },
  };
}

describe('applyCodeBlock', () => {
  it('asks the node with the block, its heading, question and language, shows the diff and applies once confirmed', async () => {
    const asked: ResolveBlockParams[] = [];
    const ui = fakeUi();
    const problem = await applyCodeBlock({ text: 'def stamp(v):\n    return v\n', heading: 'In `timed.py`:', question: 'fix stamp', lang: 'python' },
      async (p) => { asked.push(p); return resolved({ edits: [edit('pkg/timed.py', 'old\n', 'new\n')], named: 'timed.py' }); }, ui);
    expect(problem).toBeNull();
    expect(asked).toEqual([{ text: 'def stamp(v):\n    return v\n', uri: 'file:///ws/app.py', heading: 'In `timed.py`:',
      question: 'fix stamp', lang: 'python' }]);
    expect(ui.log).toEqual(['confirm:pkg/timed.py:Apply the code block to pkg/timed.py? (Undo reverts it.)', 'apply:pkg/timed.py']);
  });

  it('applies a rename to every file together and says what was carried', async () => {
    const ui = fakeUi();
    await applyCodeBlock({ text: 'def plus_one(x): ...' }, async () => resolved({
      edits: [edit('util.py', 'a', 'b'), edit('main.py', 'c', 'd')], named: 'util.py',
      notes: ['rename of `helper` to `plus_one` carried to every use: 1 more place(s): main.py (2)'] }), ui);
    expect(ui.log[0]).toBe('confirm:util.py,main.py:Apply the code block to 2 files (util.py, main.py)? (Undo reverts each file.)');
    expect(ui.log[1]).toBe('apply:util.py,main.py');
    expect(ui.log[2]).toContain('carried to every use');
  });

  it('asks which file when the block names none and its definitions are in several, then asks the node again', async () => {
    const asked: ResolveBlockParams[] = [];
    const ui = fakeUi({ pick: 'pkg/encoding.py' });
    const problem = await applyCodeBlock({ text: 'def helper(x): return 2' }, async (p) => {
      asked.push(p);
      return p.path ? resolved({ edits: [edit(p.path, 'x', 'y')], named: p.path })
        : resolved({ candidates: ['util.py', 'pkg/encoding.py'], problems: ['`helper` is defined in 2 places'] });
    }, ui);
    expect(problem).toBeNull();
    expect(asked.map((p) => p.path)).toEqual([undefined, 'pkg/encoding.py']);
    expect(ui.log).toEqual(['pick:util.py,pkg/encoding.py', 'confirm:pkg/encoding.py:Apply the code block to pkg/encoding.py? (Undo reverts it.)',
      'apply:pkg/encoding.py']);
    const dismissed = fakeUi();
    expect(await applyCodeBlock({ text: 'def helper(x): return 2' },
      async () => resolved({ candidates: ['a.py', 'b.py'] }), dismissed)).toBeNull();
    expect(dismissed.log).toEqual(['pick:a.py,b.py', 'status:Contenox: code block not applied']);
  });

  it('a block that resolves nowhere replaces the selection when there is one, else says why', async () => {
    const withSelection = fakeUi({ selection: true });
    expect(await applyCodeBlock({ text: 'x = 1' }, async () => resolved({}), withSelection)).toBeNull();
    expect(withSelection.log).toEqual(['selection:x = 1']);
    expect(await applyCodeBlock({ text: 'x = 1' }, async () => resolved({}), fakeUi()))
      .toMatch(/names no file and none of its definitions is in the workspace/);
    // a block naming a file is never put over the selection of another
    const named = fakeUi({ selection: true });
    expect(await applyCodeBlock({ text: 'x = 1', heading: 'util.py' }, async () => resolved({ named: 'util.py',
      problems: ['the block is not the whole of util.py and replaces none of its definitions: select the lines it replaces'] }), named))
      .toMatch(/not the whole of util.py/);
    expect(named.log).toEqual([]);
  });

  it('changes nothing when the user declines', async () => {
    const ui = fakeUi({ confirm: false });
    expect(await applyCodeBlock({ text: 'x' }, async () => resolved({ edits: [edit('a.py', 'a', 'b')] }), ui)).toBeNull();
    expect(ui.log.at(-1)).toBe('status:Contenox: code block not applied');
    expect(ui.log.some((l) => l.startsWith('apply:'))).toBe(false);
  });

  it('words the question for a whole file and a new one', () => {
    expect(confirmQuestion(resolved({ edits: [edit('util.py', 'a', 'b')], wholeFile: true })))
      .toBe('Replace the whole of util.py with the code block? (Undo reverts it.)');
    expect(confirmQuestion(resolved({ edits: [edit('pkg/fresh.py', null, 'b')], wholeFile: true })))
      .toBe('Create pkg/fresh.py from the code block?');
  });
});

describe('applyProposedEdits', () => {
  beforeEach(() => {
    created.applied.length = 0;
    documents.clear();
  });

  it('applies every file in one WorkspaceEdit (one undo step per file), creating new ones', async () => {
    documents.set('file:///ws/util.py', 'a\nb\n');
    documents.set('file:///ws/main.py', 'c\n');
    expect(await applyProposedEdits([edit('util.py', 'a\nb\n', 'A\nb\n'), edit('main.py', 'c\n', 'C\n'),
      edit('new.py', null, 'n\n')])).toBeNull();
    const applied = created.applied[0] as WorkspaceEdit;
    expect(created.applied).toHaveLength(1);
    expect(applied.replaced.map((r) => [r.uri.toString(), r.text])).toEqual([['file:///ws/util.py', 'A\nb\n'], ['file:///ws/main.py', 'C\n']]);
    expect(applied.replaced[0]?.range).toEqual(new Range(new Position(0, 0), new Position(2, 0)));
    expect(applied.createdFiles).toEqual([{ uri: expect.anything(), contents: 'n\n' }]);
  });

  it('applies nothing when a file changed since the block was resolved', async () => {
    documents.set('file:///ws/util.py', 'a\nb\n');
    documents.set('file:///ws/main.py', 'edited\n');
    expect(await applyProposedEdits([edit('util.py', 'a\nb\n', 'A\nb\n'), edit('main.py', 'c\n', 'C\n')]))
      .toBe('main.py changed since the code block was resolved; apply again');
    expect(created.applied).toHaveLength(0);
  });
});
