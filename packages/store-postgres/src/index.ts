export {
  POSTGRES_CONNECT_TIMEOUT_MS,
  type PostgresSessionStore,
  type PostgresSessionStoreOptions,
  postgresSessionStore,
} from "./postgres-session-store.js";
export {
  PostgresSessionStoreError,
  type PostgresSessionStoreErrorCode,
} from "./postgres-session-store-error.js";
export { DEFAULT_SESSION_TABLE } from "./session-table.js";
