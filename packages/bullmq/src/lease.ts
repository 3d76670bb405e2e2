import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";

/**
 * A session's lease, held by one worker's step (D10). It is the step's `StepLease` of
 * `@lattice/core` (H28): `fence` goes with every append of the step, and `held()` is asked
 * before each call and append. Internal.
 */
export interface SessionLease {
  /**
   * The lease's generation, a fencing token: higher for each new holder of the session's
   * lease (H28). Taken from Redis's clock in microseconds, or the previous one plus one when
   * that is not higher, so it grows even after Redis lost its keys.
   */
  readonly fence: number;
  /**
   * Whether the lease still holds by this process's monotonic clock (`performance.now()`, which
   * a wall clock stepped back does not move): until `leaseMs` minus a margin after the last
   * command that set or renewed it was sent. Synchronous: a process frozen past that (SIGSTOP,
   * a long pause) answers `false` as it wakes, before any timer of its own runs.
   */
  held(): boolean;
  /**
   * Runs Redis commands (each `[name, ...arguments]`) in one script that first checks that this
   * holder still has the lease in Redis (its token), so that a holder frozen past its lease
   * writes nothing even if it woke between a `held()` check and the write (H28). Resolves
   * whether they ran.
   */
  whileHeld(commands: readonly (readonly string[])[]): Promise<boolean>;
  /**
   * Raises the session's last fence in Redis to `fence` when that is higher, while this holder
   * still has the lease (its token): for a session store whose fence is ahead of Redis's (a
   * failover to a replica that lost the fence key, the clock stepped back), so that the next
   * lease's fence passes the store's (H28). Resolves whether this holder had the lease.
   */
  raiseFenceTo(fence: number): Promise<boolean>;
  /** Calls `listener` if the lease is lost (a renewal found another holder or none). */
  onLost(listener: () => void): void;
  /** Stops renewing and gives the lease back, if still held. */
  release(): Promise<void>;
}

// Takes the lease if free (SET NX PX) and gives it the next fence: Redis's time in
// microseconds (a safe integer until the year 2255), or one more than the session's last fence
// when that is not lower. The last fence is kept for a day (ARGV[3]); after that Redis's clock
// alone orders fences. Returns the fence as text, or false.
const TAKE = `if not redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") then
  return false
end
local now = redis.call("TIME")
local fence = tonumber(now[1]) * 1000000 + tonumber(now[2])
local last = tonumber(redis.call("GET", KEYS[2]) or "0")
if last >= fence then fence = last + 1 end
local text = string.format("%.0f", fence)
redis.call("SET", KEYS[2], text, "PX", ARGV[3])
return text`;
// Raises the session's last fence to ARGV[2] if higher, while the holder has the lease.
const RAISE_FENCE = `if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
if tonumber(ARGV[2]) > tonumber(redis.call("GET", KEYS[2]) or "0") then
  redis.call("SET", KEYS[2], ARGV[2], "PX", ARGV[3])
end
return 1`;
// Runs the commands of ARGV[2] (a JSON array of arrays of strings) while the holder has the
// lease: all of them or none, as a script runs alone.
const WHILE_HELD = `if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
for _, command in ipairs(cjson.decode(ARGV[2])) do
  redis.call(unpack(command))
end
return 1`;
/** How long a session's last fence is kept (the lease alone lasts `leaseMs`). */
const FENCE_KEPT_MS = 86_400_000;
// Renews the lease only while this holder has it.
const RENEW = `if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`;
// Gives it back only while this holder has it.
const RELEASE = `if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`;

/**
 * Takes the lease on a session (`SET NX PX`, tried again a few times within ~30 ms) with its
 * next fence (kept at `fenceKey`), and renews it every third of `leaseMs` until released.
 * Returns `undefined` when another step holds it. A worker killed while holding it loses it
 * after `leaseMs`. Internal.
 *
 * The holder gives the lease up (and calls the `onLost` listener) before it can have lapsed:
 * a lease set or renewed by a command sent at time `t` lasts at least until `t + leaseMs` on
 * Redis's side, so a deadline at `t + leaseMs - margin` after the last command that succeeded,
 * counted from when it was sent, fires first when Redis stops answering.
 */
export async function takeSessionLease(
  client: Redis,
  key: string,
  fenceKey: string,
  leaseMs: number,
): Promise<SessionLease | undefined> {
  const token = randomBytes(12).toString("hex");
  const px = Math.ceil(leaseMs);
  const take = () =>
    client.eval(TAKE, 2, key, fenceKey, token, String(px), String(FENCE_KEPT_MS)) as Promise<
      string | null
    >;
  // A lease is often given back within milliseconds (the step before it just ended): a few
  // quick tries spare the job a trip through BullMQ's delayed set. Times are monotonic.
  let sentAt = performance.now();
  let taken = await take();
  for (let tries = 0; taken === null && tries < 3; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 5 * (tries + 1)));
    sentAt = performance.now();
    taken = await take();
  }
  if (taken === null) return undefined;
  const fence = Number(taken);
  let lost: (() => void) | undefined;
  let released = false;
  const every = Math.max(10, leaseMs / 3);
  // Time left for the listener to stop the step before another worker may take the lease.
  const margin = Math.min(every, leaseMs / 4);
  let deadline: ReturnType<typeof setTimeout> | undefined;
  /** When the lease stops holding by this process's clock (`arm` moves it on). */
  let heldUntil = 0;
  const stop = (): void => {
    released = true;
    clearInterval(timer);
    clearTimeout(deadline);
  };
  const lose = (): void => {
    if (released) return;
    stop();
    lost?.();
  };
  /** The lease holds until at least `from + leaseMs`: give it up `margin` before. */
  const arm = (from: number): void => {
    heldUntil = from + leaseMs - margin;
    clearTimeout(deadline);
    deadline = setTimeout(lose, Math.max(0, from + leaseMs - margin - performance.now()));
    deadline.unref();
  };
  const timer = setInterval(() => {
    const sent = performance.now();
    client.eval(RENEW, 1, key, token, String(px)).then(
      (renewed) => {
        if (renewed === 0) lose();
        else if (!released) arm(sent);
      },
      // The next tick tries again; the deadline gives the lease up once it may lapse.
      () => {},
    );
  }, every);
  timer.unref();
  arm(sentAt);
  return {
    fence,
    held: () => !released && performance.now() < heldUntil,
    async whileHeld(commands) {
      const ran = await client.eval(WHILE_HELD, 1, key, token, JSON.stringify(commands));
      return ran === 1;
    },
    async raiseFenceTo(higher) {
      const raised = await client.eval(
        RAISE_FENCE,
        2,
        key,
        fenceKey,
        token,
        String(higher),
        String(FENCE_KEPT_MS),
      );
      return raised === 1;
    },
    onLost(listener) {
      lost = listener;
    },
    async release() {
      if (released) return;
      stop();
      await client.eval(RELEASE, 1, key, token);
    },
  };
}

/**
 * A delay before a step that waits for its session's lease (or for its turn in the session)
 * is tried again: short, jittered. Internal.
 */
export function retryDelay(leaseMs: number): number {
  const base = Math.min(250, leaseMs / 4);
  return base + (randomBytes(1)[0]! / 255) * base;
}
