import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/** The README with its line breaks folded, so reflowing the prose does not break the checks. */
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8").replace(/\s+/g, " ");

describe("README", () => {
  it("T28: says that transactions and revision checks remain the handler's job", () => {
    expect(readme).toContain(
      "Transactions, locks and revision checks (compare-and-swap on a version or an ETag) remain the handler's job.",
    );
    expect(readme).toMatch(/The policy sees one model reply, and nothing else/);
  });

  it('T23: documents that an unknown tool has kind "tool"', () => {
    expect(readme).toContain('A call to an unknown tool has kind `"tool"`.');
  });
});
