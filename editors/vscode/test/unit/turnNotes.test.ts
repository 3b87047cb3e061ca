import { describe, expect, it } from 'vitest';
import { MAX_TURN_NOTES, mergeNotes, TURN_NOTES_KEY, TurnNoteStore, toTurnNote } from '../../src/turnNotes';
import { EXPLAIN } from './fixtures';

function memento(initial?: unknown) {
  const values = new Map<string, unknown>(initial === undefined ? [] : [[TURN_NOTES_KEY, initial]]);
  return {
    values,
    get: <T>(key: string): T | undefined => values.get(key) as T | undefined,
    update: (key: string, value: unknown): void => { values.set(key, JSON.parse(JSON.stringify(value))); },
  };
}

describe('TurnNoteStore', () => {
  it('keeps notes by thread and turn, persisted across a reload', () => {
    const m = memento();
    const store = new TurnNoteStore(m);
    store.set('panel', 3, { explain: EXPLAIN, truncated: true });
    store.set('panel-x', 3, { explain: null, repeated: true });
    expect(store.get('panel', 3)).toEqual({ explain: EXPLAIN, truncated: true });
    expect(store.get('panel', 4)).toBeUndefined();
    const reloaded = new TurnNoteStore(m);
    expect(reloaded.get('panel', 3)).toEqual({ explain: EXPLAIN, truncated: true });
    expect(reloaded.get('panel-x', 3)).toEqual({ explain: null, repeated: true });
  });

  it('keeps only the newest answers', () => {
    const m = memento();
    const store = new TurnNoteStore(m, 2);
    store.set('t', 1, { explain: EXPLAIN });
    store.set('t', 2, { explain: EXPLAIN });
    store.set('t', 1, { explain: EXPLAIN, truncated: true }); // rewritten: the newest again
    store.set('t', 3, { explain: EXPLAIN });
    expect(store.get('t', 2)).toBeUndefined();
    expect(store.get('t', 1)?.truncated).toBe(true);
    expect((m.values.get(TURN_NOTES_KEY) as unknown[]).length).toBe(2);
    expect(MAX_TURN_NOTES).toBeGreaterThan(10);
  });

  it('drops what it cannot read back', () => {
    const store = new TurnNoteStore(memento([['t#1', { explain: { turn: 'x' } }], 'junk', ['t#2', { repeated: true }],
      ['t#3', { explain: EXPLAIN }]]));
    expect(store.get('t', 1)).toBeUndefined();
    expect(store.get('t', 2)).toEqual({ explain: null, repeated: true });
    expect(store.get('t', 3)?.explain?.turn).toBe(3);
    expect(new TurnNoteStore(memento({ not: 'a list' })).get('t', 3)).toBeUndefined();
    expect(toTurnNote({ explain: null })).toBeUndefined();
  });
});

describe('mergeNotes', () => {
  it("takes the node's explain first and keeps a cut or a stop either source knows of", () => {
    const node = { explain: EXPLAIN };
    const kept = { explain: null, truncated: true };
    expect(mergeNotes(node, kept)).toEqual({ explain: EXPLAIN, truncated: true });
    expect(mergeNotes({ explain: null, repeated: true }, { explain: EXPLAIN })).toEqual({ explain: EXPLAIN, repeated: true });
    expect(mergeNotes(undefined, kept)).toBe(kept);
    expect(mergeNotes(node, undefined)).toBe(node);
    expect(mergeNotes(undefined, undefined)).toBeUndefined();
  });
});
