import { describe, expect, it } from "vitest";
import { describeConnection } from "./connection.js";

describe("describeConnection", () => {
  it("names a URL without its password, in the userinfo or in a password query parameter", () => {
    expect(describeConnection("redis://:hunter2@127.0.0.1:6390/2")).toBe(
      "redis://:***@127.0.0.1:6390/2",
    );
    const described = describeConnection("redis://127.0.0.1:6390?Password=hunter2&db=3");
    expect(described).not.toContain("hunter2");
    expect(described).toContain("db=3");
    expect(describeConnection("not a url")).toBe("(an unparsable Redis URL)");
  });

  it("names options by host, port and database, and a socket by its path", () => {
    expect(describeConnection({ host: "cache", port: 6380, db: 1, password: "hunter2" })).toBe(
      "redis://cache:6380/1",
    );
    expect(describeConnection({ path: "/run/redis.sock" })).toBe("unix:/run/redis.sock");
  });
});
