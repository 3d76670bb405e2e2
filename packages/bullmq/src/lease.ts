import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";

/** A session's lease, held by one worker's step (D10). Internal. */
export interface SessionLease {
  /** Calls `listener` if the lease is lost (a renewal found another holder or none). */
  onLost(listener: () => void): void;
  /** Stops renewing and gives the lease back, if still held. */
  release(): Promise<void>;
}

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
 * Takes the lease on a session (`SET NX PX`, tried again a few times within ~30 ms) and renews
 * it every third of `leaseMs` until released. Returns `undefined` when another step holds it. A worker killed while holding it
 * loses it after `leaseMs`. Internal.
 */
export async function takeSessionLease(
  client: Redis,
  key: string,
  leaseMs: number,
): Promise<SessionLease | undefined> {
  const token = randomBytes(12).toString("hex");
  // A lease is often given back within milliseconds (the step before it just ended): a few
  // quick tries spare the job a trip through BullMQ's delayed set.
  let taken = await client.set(key, token, "PX", Math.ceil(leaseMs), "NX");
  for (let tries = 0; taken !== "OK" && tries < 3; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 5 * (tries + 1)));
    taken = await client.set(key, token, "PX", Math.ceil(leaseMs), "NX");
  }
  if (taken !== "OK") return undefined;
  let lost: (() => void) | undefined;
  let released = false;
  let renewedAt = Date.now();
  const every = Math.max(10, leaseMs / 3);
  const lose = (): void => {
    if (released) return;
    released = true;
    clearInterval(timer);
    lost?.();
  };
  const timer = setInterval(() => {
    // Redis unreachable for (almost) a lease: it may have lapsed, and another worker may take
    // the step. Stop before that can overlap.
    if (Date.now() - renewedAt > leaseMs - every) {
      lose();
      return;
    }
    client.eval(RENEW, 1, key, token, String(Math.ceil(leaseMs))).then(
      (renewed) => {
        if (renewed === 0) lose();
        else renewedAt = Date.now();
      },
      // The next tick tries again, or gives the lease up once it may have lapsed.
      () => {},
    );
  }, every);
  timer.unref();
  return {
    onLost(listener) {
      lost = listener;
    },
    async release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      await client.eval(RELEASE, 1, key, token);
    },
  };
}
