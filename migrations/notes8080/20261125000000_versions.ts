import { versionedNotesMigration } from '../../server/shared/safeWrites.js';

export const { up, down } = versionedNotesMigration('body');
