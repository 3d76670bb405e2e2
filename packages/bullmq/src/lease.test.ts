import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { takeSessionLease } from "./lease.js";

/**
 * A stand-in for the Redis client: SET succeeds at once; the first `answered` renewals succeed
 * after `replyMs`, and later ones never get an answer (Redis stopped answering).
 */
function stubClient(answered: number, replyMs = 0): { client: Redis; renewalsSent: number[] } {
  const renewalsSent: number[] = [];
  const client = {
    set: async () => "OK",
    eval: (script: string) => {
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
  it("D10: a holder whose renewals go unanswered gives the lease up before it can have lapsed in Redis, counted from when its last renewal was sent", async () => {
    const leaseMs = 300;
    // The one renewal answered takes 100 ms to come back (a slow network): the lease runs
    // from when Redis applied it, which may be as early as when it was sent.
    const { client, renewalsSent } = stubClient(1, 100);
    const takenAt = Date.now();
    const lease = await takeSessionLease(client, "lease:s1", leaseMs);
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
    const lease = await takeSessionLease(client, "lease:s2", 120);
    let lost = false;
    lease!.onLost(() => {
      lost = true;
    });
    await lease!.release();
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(lost).toBe(false);
  });
});
