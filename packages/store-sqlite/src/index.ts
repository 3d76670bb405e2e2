export { SQLITE_BUSY_TIMEOUT_MS } from "./open-session-database.js";
export {
  type SqliteSessionStore,
  type SqliteSessionStoreOptions,
  type SqliteSynchronous,
  sqliteSessionStore,
} from "./sqlite-session-store.js";
export {
  SqliteSessionStoreError,
  type SqliteSessionStoreErrorCode,
} from "./sqlite-session-store-error.js";
