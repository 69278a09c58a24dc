import { safeWritesMigration } from '../../server/shared/safeWrites.js';

export const { up, down } = safeWritesMigration('content');
