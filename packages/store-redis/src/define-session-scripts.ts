import type { Redis } from "ioredis";

// The names carry a version: a newer store on the same client defines its own commands
// instead of calling these with other arguments.
const APPEND_COMMAND = "latticeSessionAppendV2";
const DELETE_COMMAND = "latticeSessionDeleteV2";

/**
 * Compare-and-append (R8, D2), fenced when given a fence (H28), atomic because Redis runs a
 * script alone.
 * KEYS[1]: the session's list; KEYS[2]: the session index (a set); KEYS[3]: the session's fence
 * (a string holding the highest fence its appends carried).
 * ARGV[1]: the expected version; ARGV[2]: the session id; ARGV[3]: the fence, or "" for none;
 * ARGV[4..]: the entries, JSON text (none: the append only raises the fence).
 * Returns {1, new version}; {0, actual version} on a conflict; {2, the session's fence as text}
 * when the fence is lower. A refused append writes nothing. The fence is compared as a number
 * (fences are safe integers, exact in Lua's doubles) and stored as the text it was sent as.
 */
const APPEND_SCRIPT = `
local fence = ARGV[3]
local current = false
if fence ~= '' then
  current = redis.call('GET', KEYS[3])
  if current and tonumber(current) > tonumber(fence) then
    return {2, current}
  end
end
local version = redis.call('LLEN', KEYS[1])
if version ~= tonumber(ARGV[1]) then
  return {0, version}
end
if fence ~= '' and (not current or tonumber(current) < tonumber(fence)) then
  redis.call('SET', KEYS[3], fence)
end
if #ARGV < 4 then
  return {1, version}
end
local first = 4
while first <= #ARGV do
  local last = math.min(first + 999, #ARGV)
  redis.call('RPUSH', KEYS[1], unpack(ARGV, first, last))
  first = last + 1
end
redis.call('SADD', KEYS[2], ARGV[2])
return {1, version + #ARGV - 3}
`;

/**
 * Deletes a session's list, its fence and its index member together.
 * KEYS[1]: the session's list; KEYS[2]: the index; KEYS[3]: the session's fence.
 * ARGV[1]: the session id. Returns 1 when the list or the index member existed.
 */
const DELETE_SCRIPT = `
redis.call('DEL', KEYS[3])
local removed = redis.call('DEL', KEYS[1]) + redis.call('SREM', KEYS[2], ARGV[1])
if removed > 0 then
  return 1
end
return 0
`;

/** The store's two Lua scripts, sent with EVALSHA (and EVAL once after a script flush). */
export interface SessionScripts {
  /**
   * Runs compare-and-append, fenced when `fence` is given; resolves `[1, newVersion]`,
   * `[0, actualVersion]` (a conflict) or `[2, sessionFence]` (a lower fence, H28).
   */
  append(
    keys: SessionKeys,
    expectedVersion: number,
    sessionId: string,
    fence: number | undefined,
    texts: readonly string[],
  ): Promise<[number, number | string]>;
  /** Deletes a session and its fence; resolves 1 when it existed, else 0. */
  delete(keys: SessionKeys, sessionId: string): Promise<number>;
}

/** The keys of one session and the index, as the scripts take them. */
export interface SessionKeys {
  /** The session's list of entries. */
  readonly session: string;
  /** The set of session ids. */
  readonly index: string;
  /** The session's fence (H28). */
  readonly fence: string;
}

type ScriptCommand = (...args: unknown[]) => Promise<unknown>;

/**
 * Defines the store's scripts on `client` (ioredis `defineCommand`, once per client: it adds
 * the methods `latticeSessionAppendV2` and `latticeSessionDeleteV2`) and returns them.
 * ioredis runs each with EVALSHA and falls back to EVAL when Redis lost its script cache (a
 * restart, `SCRIPT FLUSH`).
 */
export function defineSessionScripts(client: Redis): SessionScripts {
  const commands = client as unknown as Record<string, ScriptCommand | undefined>;
  if (typeof commands[APPEND_COMMAND] !== "function") {
    client.defineCommand(APPEND_COMMAND, { numberOfKeys: 3, lua: APPEND_SCRIPT });
  }
  if (typeof commands[DELETE_COMMAND] !== "function") {
    client.defineCommand(DELETE_COMMAND, { numberOfKeys: 3, lua: DELETE_SCRIPT });
  }
  const run = (name: string, args: unknown[]) => commands[name]!.apply(client, args);
  return {
    append: async (keys, expectedVersion, sessionId, fence, texts) =>
      (await run(APPEND_COMMAND, [
        keys.session,
        keys.index,
        keys.fence,
        expectedVersion,
        sessionId,
        fence === undefined ? "" : String(fence),
        texts,
      ])) as [number, number | string],
    delete: async (keys, sessionId) =>
      (await run(DELETE_COMMAND, [keys.session, keys.index, keys.fence, sessionId])) as number,
  };
}
