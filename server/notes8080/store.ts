import type { Database } from '../shared/database.js';

/** A row of the `notes` table. */
export interface NoteRow {
  id: number;
  title: string;
  body: string;
  created_at: Date;
}

export interface NoteFields {
  title: string;
  body: string;
}

const notes = (db: Database) => db<NoteRow>('notes');

export function listNotes(db: Database): Promise<NoteRow[]> {
  return notes(db).select('*').orderBy('id', 'desc');
}

export function findNote(db: Database, id: number): Promise<NoteRow | undefined> {
  return notes(db).where({ id }).first();
}

export async function insertNote(db: Database, fields: NoteFields): Promise<NoteRow> {
  const [row] = await notes(db).insert(fields).returning('*');
  return row as NoteRow;
}

/** The replaced note, or undefined when it no longer exists (deleted meanwhile). */
export async function replaceNote(db: Database, id: number, fields: NoteFields): Promise<NoteRow | undefined> {
  const [row] = await notes(db).where({ id }).update(fields).returning('*');
  return row as NoteRow | undefined;
}

/** Whether a note was deleted. */
export async function deleteNote(db: Database, id: number): Promise<boolean> {
  return (await notes(db).where({ id }).delete()) > 0;
}
