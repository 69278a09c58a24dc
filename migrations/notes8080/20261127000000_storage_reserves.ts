import { reservedStorageMigration } from '../../server/shared/safeWrites.js';

export const { up, down } = reservedStorageMigration('body');
