import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../test-servers/commands.js";
import { type FaultHttpServer, startFaultHttpServer } from "../test-servers/fault-server-http.js";
import { runNodeScript } from "../test-servers/run-node.js";
import { mcpServer } from "./mcp-server.js";
import { call } from "./test-helpers.js";

const FLOOD_CLIENT = fileURLToPath(new URL("../test-servers/flood-client.ts", import.meta.url));

describe("a remote server's response is bounded (H18)", () => {
  let server: FaultHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it.each([
    ["flood_json", "a response body"],
    ["flood_sse", "one SSE event"],
  ])(
    "H18: a client with a 512 MB heap survives %s, and the call ends naming the bound",
    async (tool, what) => {
      server = await startFaultHttpServer("hostile");
      // A client with a 512 MB heap, calling the tool once.
      const outcome = await runNodeScript(["--max-old-space-size=512"], FLOOD_CLIENT, [
        server.url,
        tool,
      ]);
      expect(outcome.stderr).not.toContain("heap out of memory");
      expect({ code: outcome.code, signal: outcome.signal }).toEqual({ code: 0, signal: null });
      const line = JSON.parse(outcome.stdout) as {
        isError: boolean;
        text: string;
        maxRssMb: number;
      };
      expect(line.isError).toBe(true);
      expect(line.text).toContain(`mcp server "web": tool "${tool}" failed:`);
      expect(line.text).toContain(
        `the server sent ${what} larger than 16 MiB (maxResponseBytes); the rest was not read.`,
      );
      // Peak resident memory of the whole process, as the README says (about 185 MB measured).
      expect(line.maxRssMb).toBeLessThan(256);
    },
    30_000,
  );

  it("H18: maxResponseBytes sets the bound; the connection still serves the next call", async () => {
    server = await startFaultHttpServer("hostile");
    await using source = mcpServer({
      name: "web",
      url: server.url,
      maxResponseBytes: 64 * 1024,
      onWarning: () => {},
    });
    const tools = await source.tools();
    const big = await call(tools, "web__huge", { bytes: 100_000 });
    expect(big.isError).toBe(true);
    expect(big.text).toMatch(
      /^mcp server "web": tool "huge" failed: the server sent (a response body|one SSE event) larger than 64 KiB \(maxResponseBytes\); the rest was not read\. Raise maxResponseBytes if the server's answers are that large\.$/,
    );
    expect((await call(tools, "web__huge", { bytes: 1_000 })).text).toBe("a".repeat(1_000));
    expect((await call(tools, "web__echo", { text: "still here" })).text).toBe("echo:still here");
  });

  it("H18: when one oversize SSE event ends the connection, the other calls in flight say it was another answer", async () => {
    server = await startFaultHttpServer("hostile");
    await using source = mcpServer({
      name: "web",
      url: server.url,
      maxResponseBytes: 64 * 1024,
      isConcurrencySafe: true,
      onWarning: () => {},
    });
    const tools = await source.tools();
    const slow = call(tools, "web__slow", { ms: 10_000 });
    expect(await waitFor(() => server?.stats.calls.slow === 1)).toBe(true);
    const flooded = await call(tools, "web__flood_sse", {});
    const waiting = await slow;
    expect(flooded.text).toBe(
      `mcp server "web": tool "flood_sse" failed: the server sent one SSE event larger than 64 KiB (maxResponseBytes); the rest was not read. Raise maxResponseBytes if the server's answers are that large.`,
    );
    expect(waiting.isError).toBe(true);
    expect(waiting.text).toBe(
      `mcp server "web": tool "slow" failed: the connection to the server was ended because of another answer on it: the server sent one SSE event larger than 64 KiB (maxResponseBytes); the rest was not read. Raise maxResponseBytes if the server's answers are that large. This call's answer was lost with the connection; the next call reconnects.`,
    );
  });

  it("H18: maxResponseBytes is checked", () => {
    for (const value of [0, -1, 1.5, Number.POSITIVE_INFINITY, "16MiB"]) {
      expect(() =>
        mcpServer({
          name: "web",
          url: "http://127.0.0.1:1/mcp",
          maxResponseBytes: value as number,
        }),
      ).toThrow(/option "maxResponseBytes" must be a whole number of bytes > 0/);
    }
  });
});
