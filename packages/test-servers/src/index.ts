export type { PostgresServer } from "./postgres-server.js";
export { ensurePostgresBinaries, startPostgres } from "./postgres-server.js";
export type { RedisServer, StartRedisOptions } from "./redis-server.js";
export { ensureRedisServer, startRedis } from "./redis-server.js";
