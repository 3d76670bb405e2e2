import type { Redis } from "ioredis";

// The names carry a version: a newer store on the same client defines its own commands
// instead of calling these with other arguments.
const APPEND_COMMAND = "latticeSessionAppendV1";
const DELETE_COMMAND = "latticeSessionDeleteV1";

/**
 * Compare-and-append (R8, D2), atomic because Redis runs a script alone.
 * KEYS[1]: the session's list; KEYS[2]: the session index (a set).
 * ARGV[1]: the expected version; ARGV[2]: the session id; ARGV[3..]: the entries, JSON text.
 * Returns {1, new version}, or {0, actual version} and writes nothing.
 */
const APPEND_SCRIPT = `
local version = redis.call('LLEN', KEYS[1])
if version ~= tonumber(ARGV[1]) then
  return {0, version}
end
local first = 3
while first <= #ARGV do
  local last = math.min(first + 999, #ARGV)
  redis.call('RPUSH', KEYS[1], unpack(ARGV, first, last))
  first = last + 1
end
redis.call('SADD', KEYS[2], ARGV[2])
return {1, version + #ARGV - 2}
`;

/**
 * Deletes a session's list and its index member together.
 * KEYS[1]: the session's list; KEYS[2]: the index. ARGV[1]: the session id.
 * Returns 1 when either existed.
 */
const DELETE_SCRIPT = `
local removed = redis.call('DEL', KEYS[1]) + redis.call('SREM', KEYS[2], ARGV[1])
if removed > 0 then
  return 1
end
return 0
`;

/** The store's two Lua scripts, sent with EVALSHA (and EVAL once after a script flush). */
export interface SessionScripts {
  /** Runs compare-and-append; resolves `[1, newVersion]` or `[0, actualVersion]`. */
  append(
    sessionKey: string,
    indexKey: string,
    expectedVersion: number,
    sessionId: string,
    texts: readonly string[],
  ): Promise<[number, number]>;
  /** Deletes a session; resolves 1 when it existed, else 0. */
  delete(sessionKey: string, indexKey: string, sessionId: string): Promise<number>;
}

type ScriptCommand = (...args: unknown[]) => Promise<unknown>;

/**
 * Defines the store's scripts on `client` (ioredis `defineCommand`, once per client: it adds
 * the methods `latticeSessionAppendV1` and `latticeSessionDeleteV1`) and returns them.
 * ioredis runs each with EVALSHA and falls back to EVAL when Redis lost its script cache (a
 * restart, `SCRIPT FLUSH`).
 */
export function defineSessionScripts(client: Redis): SessionScripts {
  const commands = client as unknown as Record<string, ScriptCommand | undefined>;
  if (typeof commands[APPEND_COMMAND] !== "function") {
    client.defineCommand(APPEND_COMMAND, { numberOfKeys: 2, lua: APPEND_SCRIPT });
  }
  if (typeof commands[DELETE_COMMAND] !== "function") {
    client.defineCommand(DELETE_COMMAND, { numberOfKeys: 2, lua: DELETE_SCRIPT });
  }
  const run = (name: string, args: unknown[]) => commands[name]!.apply(client, args);
  return {
    append: async (sessionKey, indexKey, expectedVersion, sessionId, texts) =>
      (await run(APPEND_COMMAND, [sessionKey, indexKey, expectedVersion, sessionId, texts])) as [
        number,
        number,
      ],
    delete: async (sessionKey, indexKey, sessionId) =>
      (await run(DELETE_COMMAND, [sessionKey, indexKey, sessionId])) as number,
  };
}
