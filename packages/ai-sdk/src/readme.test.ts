// The README's example is src/readme-example/main.ts verbatim, and it runs.
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const example = readFileSync(new URL("./readme-example/main.ts", import.meta.url), "utf8");

describe("README", () => {
  it("shows readme-example/main.ts verbatim under Example", () => {
    const section = readme.slice(
      readme.indexOf("## Example"),
      readme.indexOf("\n## ", readme.indexOf("## Example") + 1),
    );
    const code = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
    expect(code).toEqual([example]);
  });

  it("runs the example: a tool round trip through the AI SDK bridge", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      await import("./readme-example/main.js");
      expect(log.mock.calls[0]).toEqual(["It is sunny in Paris."]);
      expect(log.mock.calls[1]?.[0]).toBe(2);
      expect(log.mock.calls[1]?.[1]).toMatchObject({ inputTokens: expect.any(Number) });
    } finally {
      log.mockRestore();
    }
  });

  it("names every option fromAiSdk accepts", async () => {
    for (const option of ["maxRetries", "timeoutMs", "providerOptions", "headers"]) {
      expect(readme).toContain(`| \`${option}\``);
    }
  });
});
