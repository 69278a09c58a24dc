import { fileURLToPath } from 'node:url';
import type Koa from 'koa';
import { authApp, type AuthDeps } from './auth/index.js';
import type { ServiceName } from './config.js';
import { notes8000App } from './notes/notes8000.js';
import { notes8080App } from './notes/notes8080.js';
import type { NotesDeps } from './notes/service.js';

/** A service: its name, its schema and migrations, and its Koa app (which never listens). */
export interface Service<Deps extends { config: unknown }> {
  name: ServiceName;
  database: { schema: string; migrations: string };
  /** Whether it keeps any table with these settings. */
  usesDatabase(config: Deps['config']): boolean;
  createApp(deps: Deps): Koa;
}

const service = <Deps extends { config: unknown }>(
  name: ServiceName,
  createApp: Service<Deps>['createApp'],
  usesDatabase: Service<Deps>['usesDatabase'] = () => true,
): Service<Deps> => ({
  name,
  // Found from this module, so that the compiled server finds the compiled migrations.
  database: {
    schema: name,
    migrations: fileURLToPath(new URL(`../migrations/${name}`, import.meta.url)),
  },
  usesDatabase,
  createApp,
});

export const notes8080 = service<NotesDeps>('notes8080', notes8080App);
export const notes8000 = service<NotesDeps>('notes8000', notes8000App);
// Sessions live in memory, the spec's table, unless SESSION_STORE=postgres.
export const auth = service<AuthDeps>(
  'auth',
  authApp,
  (config) => config.sessions.store === 'postgres',
);

export const SERVICES = [notes8080, notes8000, auth];

export type { AuthDeps, NotesDeps };
