// What the node's thread history (`contenox/history`: question and answer) does not keep of an answer: its
// explain context and whether it was cut at the length limit or stopped for repeating itself. The chat keeps them
// by thread and turn (the explain's `turn` is the journal's turn number, as `contenox/history` numbers it), so a
// thread switched back to, or reopened after a window reload, shows its explain lines and "Continue" notes again.

import { toExplain, type Explain } from './protocol';

/** What is kept of one answer. */
export interface TurnNote {
  explain: Explain | null;
  truncated?: boolean;
  repeated?: boolean;
}

export interface TurnNotes {
  get(thread: string, turn: number): TurnNote | undefined;
  set(thread: string, turn: number, note: TurnNote): void;
}

/** Where a store persists its entries (VS Code's workspaceState; a Map in tests). */
export interface NotesMemento {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void> | Promise<void> | void;
}

export const TURN_NOTES_KEY = 'contenox.turnNotes';
/** How many answers are kept (oldest dropped first): an explain is a few kilobytes. */
export const MAX_TURN_NOTES = 60;

type Entry = [key: string, note: TurnNote];

const keyOf = (thread: string, turn: number): string => `${thread}#${turn}`;

/** A well-formed note (what a memento written by another version may not hold), or undefined. */
export function toTurnNote(value: unknown): TurnNote | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const explain = toExplain(v.explain);
  const note: TurnNote = { explain };
  if (v.truncated === true) note.truncated = true;
  if (v.repeated === true) note.repeated = true;
  return explain || note.truncated || note.repeated ? note : undefined;
}

/** One answer's note from two sources (the node's record first): its explain from the first that has one, and
 * cut / stopped when either says so. */
export function mergeNotes(first: TurnNote | undefined, second: TurnNote | undefined): TurnNote | undefined {
  if (!first || !second) return first ?? second;
  const note: TurnNote = { explain: first.explain ?? second.explain };
  if (first.truncated || second.truncated) note.truncated = true;
  if (first.repeated || second.repeated) note.repeated = true;
  return note;
}

/** Turn notes in memory, mirrored to `memento` (when given) and bounded to `max` answers. */
export class TurnNoteStore implements TurnNotes {
  private readonly entries = new Map<string, TurnNote>();

  constructor(private readonly memento?: NotesMemento, private readonly max = MAX_TURN_NOTES) {
    const saved = memento?.get<unknown>(TURN_NOTES_KEY);
    if (!Array.isArray(saved)) return;
    for (const item of saved.slice(-max)) {
      if (!Array.isArray(item) || typeof item[0] !== 'string') continue;
      const note = toTurnNote(item[1]);
      if (note) this.entries.set(item[0], note);
    }
  }

  get(thread: string, turn: number): TurnNote | undefined {
    return this.entries.get(keyOf(thread, turn));
  }

  set(thread: string, turn: number, note: TurnNote): void {
    const key = keyOf(thread, turn);
    this.entries.delete(key); // re-inserted as the newest
    this.entries.set(key, note);
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    if (this.memento) {
      const all: Entry[] = [...this.entries];
      void this.memento.update(TURN_NOTES_KEY, all);
    }
  }
}
