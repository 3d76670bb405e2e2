export {
  type RedisSessionStore,
  type RedisSessionStoreOptions,
  redisSessionStore,
} from "./redis-session-store.js";
export {
  RedisSessionStoreError,
  type RedisSessionStoreErrorCode,
} from "./redis-session-store-error.js";
