import type { DatabaseConfig } from './config.js';
import { startEmbeddedPostgres } from './embeddedPostgres.js';
import type { Logger } from './logger.js';

export interface DatabaseServer {
  url: string;
  /** Stops the embedded server; nothing to do for an external one. */
  stop(): Promise<void>;
}

/** `DATABASE_URL` when set; otherwise an embedded PostgreSQL keeping its data in `DATA_DIR`. */
export async function openDatabaseServer(config: DatabaseConfig, logger: Logger): Promise<DatabaseServer> {
  if (config.url) return { url: config.url, stop: async () => {} };
  return startEmbeddedPostgres({ dataDir: config.dataDir, logger });
}
