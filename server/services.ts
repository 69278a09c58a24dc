import { fileURLToPath } from 'node:url';
import type Koa from 'koa';
import { authApp, type AuthDeps } from './auth/index.js';
import type { ServiceName } from './config.js';
import { notes8000App } from './notes/notes8000.js';
import { notes8080App, type NotesDeps } from './notes/notes8080.js';

/**
 * A service as the process, the tests and the benchmark see it: its name, where it keeps its
 * tables (a PostgreSQL schema of its own, brought up to date by the migrations of
 * `migrations/<name>`), and how to make its Koa app from what it depends on. `createApp` never
 * listens and reads no globals.
 */
export interface Service<Deps extends { config: unknown }> {
  name: ServiceName;
  database: { schema: string; migrations: string };
  /** Whether it keeps any table with these settings. */
  usesDatabase(config: Deps['config']): boolean;
  createApp(deps: Deps): Koa;
}

/** Found from this module, so that the compiled server finds the compiled migrations. */
const ownSchema = (name: ServiceName) => ({
  schema: name,
  migrations: fileURLToPath(new URL(`../migrations/${name}`, import.meta.url)),
});

export const notes8080: Service<NotesDeps> = {
  name: 'notes8080',
  database: ownSchema('notes8080'),
  usesDatabase: () => true,
  createApp: notes8080App,
};

export const notes8000: Service<NotesDeps> = {
  name: 'notes8000',
  database: ownSchema('notes8000'),
  usesDatabase: () => true,
  createApp: notes8000App,
};

/** Sessions live in memory, the spec's table, unless SESSION_STORE=postgres. */
export const auth: Service<AuthDeps> = {
  name: 'auth',
  database: ownSchema('auth'),
  usesDatabase: (config) => config.sessions.store === 'postgres',
  createApp: authApp,
};

/** Every service of the project, as `npm start` runs them and `npm run migrate` migrates them. */
export const SERVICES = [notes8080, notes8000, auth];

export type { AuthDeps, NotesDeps };
