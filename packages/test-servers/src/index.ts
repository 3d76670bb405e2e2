export { CHROMIUM_PATH, ensureChromium } from "./ensure-chromium.js";
export {
  CHROMIUM_ARGS,
  type LaunchChromiumOptions,
  type LaunchedChromium,
  launchChromium,
} from "./launch-chromium.js";
export type { PostgresServer } from "./postgres-server.js";
export { ensurePostgresBinaries, startPostgres } from "./postgres-server.js";
export type { RedisServer, StartRedisOptions } from "./redis-server.js";
export { ensureRedisServer, startRedis } from "./redis-server.js";
