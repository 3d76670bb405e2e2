import type { Redis } from "ioredis";

const REDACTED = "***";

/**
 * A Redis URL safe to print: its password (in the userinfo or a `password` query parameter)
 * replaced by `***`. A URL that does not parse is returned with everything between `//` and
 * `@` redacted.
 */
export function redactRedisUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.replace(/\/\/[^@/]*@/, `//${REDACTED}@`);
  }
  if (parsed.password !== "") parsed.password = REDACTED;
  for (const key of [...parsed.searchParams.keys()]) {
    if (key.toLowerCase() === "password") parsed.searchParams.set(key, REDACTED);
  }
  return parsed.toString();
}

/**
 * Names the server an ioredis client talks to, as a URL without its password:
 * `redis://127.0.0.1:6379`, `rediss://user:***@cache.internal:6380/2`, `unix:/run/redis.sock`,
 * or `redis-sentinel://mymaster` for a client that finds its primary through Sentinel.
 */
export function describeRedisClient(client: Redis): string {
  const options = client.options;
  if (Array.isArray(options.sentinels) && options.sentinels.length > 0) {
    return `redis-sentinel://${options.name ?? "mymaster"}`;
  }
  if (typeof options.path === "string" && options.path !== "") return `unix:${options.path}`;
  const scheme = options.tls === undefined ? "redis" : "rediss";
  const user = options.username ?? "";
  const userinfo =
    typeof options.password === "string" && options.password !== ""
      ? `${user}:${REDACTED}@`
      : user !== ""
        ? `${user}@`
        : "";
  const host = options.host?.includes(":") ? `[${options.host}]` : (options.host ?? "localhost");
  const database = options.db !== undefined && options.db !== 0 ? `/${options.db}` : "";
  return `${scheme}://${userinfo}${host}:${options.port ?? 6379}${database}`;
}
