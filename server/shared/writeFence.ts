import type { Knex } from 'knex';

/**
 * The check a write statement makes against the moment its client stops waiting (the last
 * parameter `Database.deadline()` gives it): later than that, the statement fails with PostgreSQL's
 * `query_canceled`, which the services answer as a store failure, and nothing is written. It
 * compares the database's clock with the service's, which are expected to agree (NTP); the
 * embedded database shares the machine's.
 */
export const inTime = (parameter: number) =>
  `write_in_time(to_timestamp($${parameter}::float8 / 1000))`;

/** The function behind `inTime`, for a service's migration. */
export async function createWriteFence(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION write_in_time(deadline timestamptz) RETURNS boolean AS $$
    BEGIN
      IF clock_timestamp() > deadline THEN
        RAISE EXCEPTION 'the client stopped waiting for this write at %', deadline USING ERRCODE = 'query_canceled';
      END IF;
      RETURN true;
    END
    $$ LANGUAGE plpgsql VOLATILE`);
}
