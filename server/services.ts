import { auth } from './auth/index.js';
import { notes8000 } from './notes8000/index.js';
import { notes8080 } from './notes8080/index.js';

/** Every service of the project, as `npm start` runs them and `npm run migrate` migrates them. */
export const SERVICES = [notes8080, notes8000, auth];
