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
 * it every third of `leaseMs` until released. Returns `undefined` when another step holds it.
 * A worker killed while holding it loses it after `leaseMs`. Internal.
 *
 * The holder gives the lease up (and calls the `onLost` listener) before it can have lapsed:
 * a lease set or renewed by a command sent at time `t` lasts at least until `t + leaseMs` on
 * Redis's side, so a deadline at `t + leaseMs - margin` after the last command that succeeded,
 * counted from when it was sent, fires first when Redis stops answering.
 */
export async function takeSessionLease(
  client: Redis,
  key: string,
  leaseMs: number,
): Promise<SessionLease | undefined> {
  const token = randomBytes(12).toString("hex");
  const px = Math.ceil(leaseMs);
  // A lease is often given back within milliseconds (the step before it just ended): a few
  // quick tries spare the job a trip through BullMQ's delayed set.
  let sentAt = Date.now();
  let taken = await client.set(key, token, "PX", px, "NX");
  for (let tries = 0; taken !== "OK" && tries < 3; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 5 * (tries + 1)));
    sentAt = Date.now();
    taken = await client.set(key, token, "PX", px, "NX");
  }
  if (taken !== "OK") return undefined;
  let lost: (() => void) | undefined;
  let released = false;
  const every = Math.max(10, leaseMs / 3);
  // Time left for the listener to stop the step before another worker may take the lease.
  const margin = Math.min(every, leaseMs / 4);
  let deadline: ReturnType<typeof setTimeout> | undefined;
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
    clearTimeout(deadline);
    deadline = setTimeout(lose, Math.max(0, from + leaseMs - margin - Date.now()));
    deadline.unref();
  };
  const timer = setInterval(() => {
    const sent = Date.now();
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
