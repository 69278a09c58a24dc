import { wideVersionsMigration } from '../../server/shared/safeWrites.js';

export const { up, down } = wideVersionsMigration;
