import { notes8080 } from '../../server/services.js';
import { NOTES_SERVICES, useNotesService } from './notesServices.js';

export interface Note {
  id: number;
  title: string;
  body: string;
  created_at: string;
}

export const NOT_FOUND = { error: 'ノートが見つかりません' };
export const TIMESTAMP = NOTES_SERVICES[0].timestamp;

/** The 8080 notes service (notes-service-8080.md) of a test file: see useNotesService. */
export function useNotes8080() {
  const notes = useNotesService(notes8080);
  return {
    ...notes,
    create: (input: unknown) => notes.create<Note>(input),
    storedNotes: async () => (await notes.call('GET', '/notes')).json as Note[],
  };
}
