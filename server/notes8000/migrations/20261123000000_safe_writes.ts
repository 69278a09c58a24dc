import { safeWritesMigration } from '../../shared/safeWrites.js';

export const { up, down } = safeWritesMigration('content');
