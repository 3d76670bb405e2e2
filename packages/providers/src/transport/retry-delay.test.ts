import { describe, expect, it } from "vitest";
import { isRetryableStatus, retryDelay } from "./retry-delay.js";

const headers = (values: Record<string, string>) => new Headers(values);

describe("retryDelay()", () => {
  it("backs off exponentially from 500 ms to at most 8 s, with up to 25 % jitter", () => {
    expect(retryDelay(1, undefined, () => 0)).toBe(500);
    expect(retryDelay(2, undefined, () => 0)).toBe(1000);
    expect(retryDelay(3, undefined, () => 0)).toBe(2000);
    expect(retryDelay(10, undefined, () => 0)).toBe(8000);
    expect(retryDelay(1, undefined, () => 0.999)).toBeGreaterThanOrEqual(375);
  });

  it("honours retry-after-ms, then retry-after in seconds or as a date, up to 60 s", () => {
    expect(retryDelay(1, headers({ "retry-after-ms": "120", "retry-after": "9" }))).toBe(120);
    expect(retryDelay(1, headers({ "retry-after": "2" }))).toBe(2000);
    const date = new Date(Date.now() + 3000).toUTCString();
    const fromDate = retryDelay(1, headers({ "retry-after": date }));
    expect(fromDate).toBeGreaterThan(1000);
    expect(fromDate).toBeLessThanOrEqual(3000);
    expect(retryDelay(1, headers({ "retry-after": "3600" }), () => 0)).toBe(500);
    expect(retryDelay(1, headers({ "retry-after": "soon" }), () => 0)).toBe(500);
  });

  it("retries 408, 409, 429, 5xx and 529, never 400, 401, 403, 404, 413", () => {
    for (const status of [408, 409, 429, 500, 502, 503, 504, 529])
      expect(isRetryableStatus(status)).toBe(true);
    for (const status of [400, 401, 403, 404, 413, 422])
      expect(isRetryableStatus(status)).toBe(false);
  });
});
