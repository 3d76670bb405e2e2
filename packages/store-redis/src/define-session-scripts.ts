import type { Redis } from "ioredis";

// The names carry a version: a newer store on the same client defines its own commands
// instead of calling these with other arguments.
const APPEND_COMMAND = "latticeSessionAppendV2";
const DELETE_COMMAND = "latticeSessionDeleteV3";
const LOAD_CHECKPOINT_COMMAND = "latticeSessionLoadCheckpointV1";
const SAVE_CHECKPOINT_COMMAND = "latticeSessionSaveCheckpointV1";

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
 * Deletes a session's list, its fence, its checkpoint and its index member together.
 * KEYS[1]: the session's list; KEYS[2]: the index; KEYS[3]: the session's fence; KEYS[4]: the
 * session's checkpoint.
 * ARGV[1]: the session id. Returns 1 when the list or the index member existed.
 */
const DELETE_SCRIPT = `
redis.call('DEL', KEYS[3], KEYS[4])
local removed = redis.call('DEL', KEYS[1]) + redis.call('SREM', KEYS[2], ARGV[1])
if removed > 0 then
  return 1
end
return 0
`;

/**
 * Reads a session's checkpoint and the entries after it, in one step (C8).
 * KEYS[1]: the session's list; KEYS[2]: the session's checkpoint (a hash: version, state).
 * Returns {checkpoint's version as text, its state, entries after it} when the session has a
 * checkpoint, else {'', '', every entry}. A checkpoint beyond the list (left by an older
 * release's delete) is passed over. LRANGE from the checkpoint's index reads only the tail.
 */
const LOAD_CHECKPOINT_SCRIPT = `
local checkpoint = redis.call('HMGET', KEYS[2], 'version', 'state')
local version = tonumber(checkpoint[1])
if version and checkpoint[2] and version <= redis.call('LLEN', KEYS[1]) then
  return {checkpoint[1], checkpoint[2], redis.call('LRANGE', KEYS[1], version, -1)}
end
return {'', '', redis.call('LRANGE', KEYS[1], 0, -1)}
`;

/**
 * Keeps a session's checkpoint when the session holds its entries and it is newer (C8).
 * KEYS[1]: the session's list; KEYS[2]: the session's checkpoint.
 * ARGV[1]: the checkpoint's version (an integer >= 1); ARGV[2]: its state, JSON text.
 * Returns 1 when kept, 0 when not (nothing written). A checkpoint beyond the list (left by an
 * older release's delete) is replaced.
 */
const SAVE_CHECKPOINT_SCRIPT = `
local version = tonumber(ARGV[1])
local length = redis.call('LLEN', KEYS[1])
if version > length then
  return 0
end
local current = tonumber(redis.call('HGET', KEYS[2], 'version'))
if current and current >= version and current <= length then
  return 0
end
redis.call('HSET', KEYS[2], 'version', ARGV[1], 'state', ARGV[2])
return 1
`;

/** The store's Lua scripts, sent with EVALSHA (and EVAL once after a script flush). */
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
  /** Deletes a session, its fence and its checkpoint; resolves 1 when it existed, else 0. */
  delete(keys: SessionKeys, sessionId: string): Promise<number>;
  /**
   * Reads the session's checkpoint and the entries after it (C8): `[version, state, entries]`,
   * `version` and `state` `""` when the session has no checkpoint (then `entries` are all).
   */
  loadCheckpoint(keys: SessionKeys): Promise<[string, string, string[]]>;
  /** Keeps a checkpoint if the session holds its entries and it is newer; resolves 1 or 0. */
  saveCheckpoint(keys: SessionKeys, version: number, state: string): Promise<number>;
}

/** The keys of one session and the index, as the scripts take them. */
export interface SessionKeys {
  /** The session's list of entries. */
  readonly session: string;
  /** The set of session ids. */
  readonly index: string;
  /** The session's fence (H28). */
  readonly fence: string;
  /** The session's checkpoint (C8): a hash of its version and its state. */
  readonly checkpoint: string;
}

type ScriptCommand = (...args: unknown[]) => Promise<unknown>;

/**
 * Defines the store's scripts on `client` (ioredis `defineCommand`, once per client: it adds
 * the methods `latticeSessionAppendV2`, `latticeSessionDeleteV3`,
 * `latticeSessionLoadCheckpointV1` and `latticeSessionSaveCheckpointV1`) and returns them.
 * ioredis runs each with EVALSHA and falls back to EVAL when Redis lost its script cache (a
 * restart, `SCRIPT FLUSH`).
 */
export function defineSessionScripts(client: Redis): SessionScripts {
  const commands = client as unknown as Record<string, ScriptCommand | undefined>;
  if (typeof commands[APPEND_COMMAND] !== "function") {
    client.defineCommand(APPEND_COMMAND, { numberOfKeys: 3, lua: APPEND_SCRIPT });
  }
  if (typeof commands[DELETE_COMMAND] !== "function") {
    client.defineCommand(DELETE_COMMAND, { numberOfKeys: 4, lua: DELETE_SCRIPT });
  }
  if (typeof commands[LOAD_CHECKPOINT_COMMAND] !== "function") {
    client.defineCommand(LOAD_CHECKPOINT_COMMAND, {
      numberOfKeys: 2,
      lua: LOAD_CHECKPOINT_SCRIPT,
    });
  }
  if (typeof commands[SAVE_CHECKPOINT_COMMAND] !== "function") {
    client.defineCommand(SAVE_CHECKPOINT_COMMAND, {
      numberOfKeys: 2,
      lua: SAVE_CHECKPOINT_SCRIPT,
    });
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
      (await run(DELETE_COMMAND, [
        keys.session,
        keys.index,
        keys.fence,
        keys.checkpoint,
        sessionId,
      ])) as number,
    loadCheckpoint: async (keys) =>
      (await run(LOAD_CHECKPOINT_COMMAND, [keys.session, keys.checkpoint])) as [
        string,
        string,
        string[],
      ],
    saveCheckpoint: async (keys, version, state) =>
      (await run(SAVE_CHECKPOINT_COMMAND, [
        keys.session,
        keys.checkpoint,
        String(version),
        state,
      ])) as number,
  };
}
