import { type RedisServer, startRedis } from "@lattice/test-servers";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { takeSessionLease } from "./lease.js";

let redis: RedisServer;
let client: Redis;
beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
});
afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

/**
 * A stand-in for the Redis client: SET succeeds at once; the first `answered` renewals succeed
 * after `replyMs`, and later ones never get an answer (Redis stopped answering).
 */
function stubClient(answered: number, replyMs = 0): { client: Redis; renewalsSent: number[] } {
  const renewalsSent: number[] = [];
  const client = {
    eval: (script: string) => {
      // Taking the lease: its fence.
      if (script.includes("TIME")) return Promise.resolve("1000");
      if (!script.includes("PEXPIRE")) return Promise.resolve(1);
      renewalsSent.push(Date.now());
      return renewalsSent.length <= answered
        ? new Promise((resolve) => setTimeout(() => resolve(1), replyMs))
        : new Promise(() => {});
    },
  };
  return { client: client as unknown as Redis, renewalsSent };
}

describe("session lease (D10)", () => {
  it("H28: each new holder gets a higher fence, from Redis's clock, even after Redis lost its keys", async () => {
    const fences: number[] = [];
    for (let round = 0; round < 5; round++) {
      const lease = await takeSessionLease(client, "lease:f", "fence:f", 5_000);
      expect(lease).toBeDefined();
      // Taken: nobody else gets it meanwhile.
      expect(await takeSessionLease(client, "lease:f", "fence:f", 5_000)).toBeUndefined();
      fences.push(lease!.fence);
      await lease!.release();
    }
    for (let index = 1; index < fences.length; index++) {
      expect(fences[index]!).toBeGreaterThan(fences[index - 1]!);
    }
    // Redis's clock in microseconds.
    const [seconds] = await client.time();
    expect(Math.abs(fences[0]! - Number(seconds) * 1e6)).toBeLessThan(60e6);
    // Many leases in a row, then Redis loses its keys: the next fence is still higher.
    for (let round = 0; round < 30; round++) {
      const lease = await takeSessionLease(client, "lease:f", "fence:f", 5_000);
      fences.push(lease!.fence);
      await lease!.release();
    }
    await client.flushall();
    const after = await takeSessionLease(client, "lease:f", "fence:f", 5_000);
    expect(after!.fence).toBeGreaterThan(fences.at(-1)!);
    expect(Number.isSafeInteger(after!.fence)).toBe(true);
    await after!.release();
  });

  it("H28: held() answers false as soon as the lease's deadline passed by the clock, before any timer ran (a frozen process)", async () => {
    const lease = await takeSessionLease(client, "lease:h", "fence:h", 300);
    expect(lease!.held()).toBe(true);
    // Block the thread past the lease, as SIGSTOP would: no timer or renewal can run.
    const until = performance.now() + 400;
    while (performance.now() < until) {
      // frozen
    }
    expect(lease!.held()).toBe(false);
    await lease!.release();
    expect(lease!.held()).toBe(false);
  });

  it("H28: held() follows the monotonic clock: a wall clock stepped back during a freeze does not keep it true", async () => {
    const lease = await takeSessionLease(client, "lease:w", "fence:w", 300);
    const now = Date.now();
    // NTP steps the wall clock back a minute while the process is frozen past its lease.
    const stepped = vi.spyOn(Date, "now").mockReturnValue(now - 60_000);
    try {
      const until = performance.now() + 400;
      while (performance.now() < until) {
        // frozen
      }
      expect(lease!.held()).toBe(false);
    } finally {
      stepped.mockRestore();
      await lease!.release();
    }
  });

  it("H28: a holder raises the session's last fence to a store's higher one, so that the next lease's fence is higher; a holder that lost the lease cannot", async () => {
    const lease = await takeSessionLease(client, "lease:r", "fence:r", 5_000);
    // The store's fence is ahead (Redis failed over to a replica that lost the fence key).
    const ahead = lease!.fence + 3_600e6;
    expect(await lease!.raiseFenceTo(ahead)).toBe(true);
    // A lower one leaves it as it is.
    expect(await lease!.raiseFenceTo(lease!.fence)).toBe(true);
    await lease!.release();
    expect(await lease!.raiseFenceTo(ahead + 10)).toBe(false);
    const next = await takeSessionLease(client, "lease:r", "fence:r", 5_000);
    expect(next!.fence).toBe(ahead + 1);
    await next!.release();
  });

  it("H28: whileHeld() writes only while the holder still has the lease in Redis, in one atomic step", async () => {
    const lease = await takeSessionLease(client, "lease:g", "fence:g", 5_000);
    expect(
      await lease!.whileHeld([
        ["HSET", "run:g", "state", "running"],
        ["RPUSH", "list:g", "a", "b"],
      ]),
    ).toBe(true);
    expect(await client.hget("run:g", "state")).toBe("running");
    expect(await client.lrange("list:g", 0, -1)).toEqual(["a", "b"]);
    // Another worker took the lease (this one was frozen past it): nothing is written.
    await client.set("lease:g", "another-holder");
    expect(await lease!.whileHeld([["HSET", "run:g", "state", "stale"]])).toBe(false);
    expect(await client.hget("run:g", "state")).toBe("running");
    await lease!.release();
  });

  it("D10: a holder whose renewals go unanswered gives the lease up before it can have lapsed in Redis, counted from when its last renewal was sent", async () => {
    const leaseMs = 300;
    // The one renewal answered takes 100 ms to come back (a slow network): the lease runs
    // from when Redis applied it, which may be as early as when it was sent.
    const { client, renewalsSent } = stubClient(1, 100);
    const takenAt = Date.now();
    const lease = await takeSessionLease(client, "lease:s1", "fence:s1", leaseMs);
    expect(lease).toBeDefined();
    const lostAt = await new Promise<number>((resolve) => lease!.onLost(() => resolve(Date.now())));
    // The last renewal that succeeded was sent at renewalsSent[0]: Redis keeps the lease until
    // at least leaseMs after that, and the holder stopped before then.
    const lastGood = renewalsSent[0]!;
    expect(lastGood).toBeGreaterThanOrEqual(takenAt);
    expect(lostAt).toBeLessThan(lastGood + leaseMs);
    // ...but not long before: it held on while the lease was surely valid.
    expect(lostAt).toBeGreaterThanOrEqual(lastGood + leaseMs / 2);
    await lease!.release();
  });

  it("D10: a released lease is never reported lost", async () => {
    const { client } = stubClient(0);
    const lease = await takeSessionLease(client, "lease:s2", "fence:s2", 120);
    let lost = false;
    lease!.onLost(() => {
      lost = true;
    });
    await lease!.release();
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(lost).toBe(false);
  });
});
